"""Fixtures of the hub test: the course's JupyterHub with real users, driven in Chromium.

:func:`course_hub` starts the hub as ``make hub`` does (``python -m instructor.hub``), on
free loopback ports with a roster of its own and a state folder in the test's temporary
folder, and stops it with SIGINT, as Ctrl-C would. :class:`Hub` runs commands as the
hub's system users (``runuser``; :meth:`Hub.login_shell` in their login shells) and logs
users in through the hub's login page; :class:`Student` is one user's JupyterLab page.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from instructor import hub as course_hub_module
from instructor.hub import USER_COMMENT, HubSettings
from support.studentview import CHROMIUM, browser_skip_reason, free_port

TIMEOUT_MS = 180_000  # generous: other tests' kernels share the cores
VENV_BIN = Path(sys.executable).parent

# A fresh user's lab, but no news pop-up over the notebook, and every cell in the page
# (JupyterLab's windowing would leave cells out of view unrendered): what the student's
# own Settings would hold, written into each home before the first login.
LAB_USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}


def hub_skip_reason(browser: bool = True) -> str | None:
    """Why the hub test cannot run here (with ``browser`` False: a test that drives no
    browser), or None."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not root: the hub test makes system users (useradd), as CI runs it"
    for tool in ("useradd", "userdel", "runuser"):
        if shutil.which(tool) is None:
            return f"no {tool}"
    return (browser and browser_skip_reason()) or course_hub_module.skip_reason()


@dataclass
class Hub:
    """A running course hub."""

    url: str
    settings: HubSettings
    process: subprocess.Popen
    log: Path

    @property
    def roster(self):
        return self.settings.roster

    @property
    def instructor(self) -> str:
        return self.roster.instructors[0]

    @property
    def course(self) -> Path:
        return self.settings.course_folder(self.instructor)

    def env(self, user: str) -> dict[str, str]:
        """A login environment of ``user`` with the role's Jupyter configuration."""
        home = self.settings.home(user)
        role = self.roster.role(user)
        return {
            "HOME": str(home),
            "USER": user,
            "LOGNAME": user,
            "PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin",
            "JUPYTER_CONFIG_PATH": str(self.settings.config_folder(role)),
            "LANG": "C.UTF-8",
        }

    def run_as(
        self,
        user: str,
        *command: str,
        cwd: Path | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess:
        """``command`` as the system user ``user`` (``runuser``), its output captured;
        ``env`` added to the login environment."""
        env = {**self.env(user), **(env or {})}
        result = subprocess.run(
            ["runuser", "-u", user, "--", "env", "-i", *[f"{k}={v}" for k, v in env.items()],
             *command],
            cwd=cwd or self.settings.home(user),
            capture_output=True,
            text=True,
        )  # fmt: skip
        if check and result.returncode != 0:
            raise AssertionError(
                f"{' '.join(command)} as {user} exited {result.returncode}:\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result

    def login_shell(
        self, user: str, command: str, check: bool = True
    ) -> subprocess.CompletedProcess:
        """``command`` (a shell command line) in a login shell of ``user``: ``runuser -l``,
        as ``ssh`` or JupyterLab's terminal runs it (``/etc/profile``, the hub's
        ``/etc/profile.d`` script, then the user's own ``~/.profile``); output captured."""
        result = subprocess.run(
            ["runuser", "-l", user, "-c", command], capture_output=True, text=True
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"{command!r} in {user}'s login shell exited {result.returncode}:\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result

    def nbgrader(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """An nbgrader command of the instructor, run in the course folder."""
        return self.run_as(self.instructor, "nbgrader", *args, cwd=self.course, check=check)

    def token(self, user: str, scopes: list[str]) -> str:
        """A JupyterHub API token of ``user`` with ``scopes``, asked for with the user's
        password (what a server's own token is for its user, without starting a server)."""
        body = {"auth": {"username": user, "password": self.settings.password}, "scopes": scopes}
        request = urllib.request.Request(
            f"{self.url}/hub/api/users/{user}/tokens",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)["token"]

    def server_env(self, user: str, token: str) -> dict[str, str]:
        """The variables the hub gives ``user``'s server (and its terminals) that nbgrader's
        exchange reads: the user, the hub's API, the token."""
        return {
            "JUPYTERHUB_USER": user,
            "JUPYTERHUB_API_URL": f"http://127.0.0.1:{self.settings.hub_port}/hub/api",
            "JUPYTERHUB_API_TOKEN": token,
        }

    def write_as(self, user: str, path: Path, text: str) -> None:
        """Write ``path`` (folders made) as root, then give it to ``user``."""
        entry = pwd.getpwnam(user)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        relative = path.relative_to(self.settings.home(user))
        for part in [relative, *relative.parents]:
            os.chown(self.settings.home(user) / part, entry.pw_uid, entry.pw_gid)

    def login(self, browser: Any, user: str, path: str = ""):
        """A new browser context logged in as ``user``, on its JupyterLab (server started);
        with ``path``, sent there instead (another user's server: JupyterHub asks once to
        authorize it, and the user does)."""
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"{self.url}/hub/login" + (f"?next={quote(path)}" if path else ""))
        page.fill("#username_input", user)
        page.fill("#password_input", self.settings.password)
        page.click("#login_submit")
        if not path:
            page.wait_for_selector(".jp-LabShell")
            return page

        def arrived(url: str) -> bool:
            return url.split("?")[0].endswith(path)

        page.wait_for_url(lambda url: "/oauth2/authorize" in url or arrived(url))
        if "/oauth2/authorize" in page.url:
            page.get_by_role("button", name="Authorize").click()
        page.wait_for_url(arrived)
        return page


def remove_hub_users(names: tuple[str, ...]) -> None:
    """Remove system users of these names that a course hub made (its GECOS comment)."""
    for name in names:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        if entry.pw_gecos == USER_COMMENT:
            subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
            subprocess.run(["userdel", name], capture_output=True)


KERNEL_GRACE_SECONDS = 10
"""How long after the hub exits its users' kernels may take to end by themselves."""


def processes_of(user: str) -> list[str]:
    """``user``'s processes that still run (state, pid, command line).

    A zombie has ended: it waits for a parent to read its exit status, and in a container
    whose PID 1 reads none, a server's zombie re-parented there stays listed.
    """
    found = subprocess.run(
        ["ps", "-u", user, "-o", "stat=,pid=,args="], capture_output=True, text=True
    )
    return [line for line in found.stdout.splitlines() if not line.lstrip().startswith("Z")]


@contextlib.contextmanager
def course_hub(workdir: Path, roster_text: str, timeout: float = 120.0) -> Iterator[Hub]:
    """``python -m instructor.hub`` with ``roster_text`` on free ports; stopped with SIGINT.

    On exit the hub must stop by itself after the SIGINT (its servers and its proxy too:
    no process of a hub user is left once their kernels, which end by themselves when their
    server is gone, have had :data:`KERNEL_GRACE_SECONDS`); then its users and its
    ``/etc/profile.d`` script are removed.
    """
    from instructor.hub import Roster

    roster_file = workdir / "roster.toml"
    roster_file.write_text(roster_text)
    roster = Roster.load(roster_file)
    remove_hub_users(roster.users)  # a crashed earlier run's users have another home
    port = free_port()
    password = secrets.token_urlsafe(12)
    # Not in pytest's folder: pytest makes /tmp/pytest-of-<user> owner-only again at each
    # session's start (other sessions run beside this one), and the users must reach state.
    state = Path(tempfile.mkdtemp(prefix="course-hub-"))
    state.chmod(0o755)
    log = workdir / "hub.log"
    handle = log.open("wb")
    command = [sys.executable, "-m", "instructor.hub", "--roster", str(roster_file),
               "--state", str(state), "--port", str(port), "--password", password]  # fmt: skip
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the hub exited:\n{log.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{url}/hub/api/", timeout=2) as response:
                    json.load(response)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"no hub after {timeout} s:\n{log.read_text(errors='replace')}"
                    ) from None
                time.sleep(0.3)
        settings = HubSettings.read(state / "hub-settings.json")
        yield Hub(url, settings, process, log)
        # Ctrl-C: the hub stops its servers and the proxy, then exits.
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the hub did not stop on SIGINT:\n{log.read_text(errors='replace')[-3000:]}"
            ) from None
        # A server exits on SIGINT without waiting for its kernels ("Interrupted..."); each
        # kernel ends by itself once it sees its parent gone (ipykernel looks every second):
        # under load, that can come a moment after the hub has exited.
        deadline = time.monotonic() + KERNEL_GRACE_SECONDS
        while True:
            left = {name: processes_of(name) for name in roster.users}
            if not any(left.values()) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert not any(left.values()), f"processes left after the hub stopped: {left}"
    finally:
        if process.poll() is None:
            # A failed test still stops the hub as Ctrl-C does: killed outright, JupyterHub
            # would leave its proxy (a child it stops itself) running.
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        handle.close()
        remove_hub_users(roster.users)
        # The hub's /etc/profile.d script, as its users: the machine as it was.
        course_hub_module.remove_environment_scripts(state=state)
        shutil.rmtree(state, ignore_errors=True)


def lab_settings(hub: Hub, user: str) -> None:
    """Write :data:`LAB_USER_SETTINGS` into ``user``'s home, as that user's files."""
    home = hub.settings.home(user)
    for plugin, values in LAB_USER_SETTINGS.items():
        package, name = plugin.rsplit("/", 1)
        path = home / ".jupyter" / "lab" / "user-settings" / package / f"{name}.jupyterlab-settings"
        hub.write_as(user, path, json.dumps(values))


__all__ = [
    "CHROMIUM",
    "TIMEOUT_MS",
    "Hub",
    "course_hub",
    "hub_skip_reason",
    "lab_settings",
    "processes_of",
]
