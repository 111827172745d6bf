"""JupyterHub's configuration for the course's hub (`make hub`, docs/jupyterhub.md).

Everything is set by ``instructor.hub.configure`` from the settings the launcher wrote
(``python -m instructor.hub``: roster, ports, state folder), so that the hub the test
starts and the one a person starts are configured by the same code.
"""

import os
from pathlib import Path

from instructor.hub import SETTINGS_VARIABLE, HubSettings, configure

c = get_config()  # noqa: F821 - provided by JupyterHub when it loads this file
configure(c, HubSettings.read(Path(os.environ[SETTINGS_VARIABLE])))
