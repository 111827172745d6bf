"""Fixtures of the student's-view tests: JupyterLab in Chromium, and a stand-in Colab.

``test_browser.py`` starts JupyterLab on a copy of ``notebooks/`` and drives Debian's
Chromium through Playwright (never a downloaded browser); ``test_colab.py`` runs every
notebook in a fresh virtual environment that has only what Colab preinstalls, at Colab's
versions (``colab_runtime.txt``), with a stand-in ``google.colab`` module, so that the
set-up cell installs the course from the checkout as it would from GitHub on Colab.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat

from instructor import anatomy, registry
from instructor.paths import COURSE_ROOT
from support.colab_image import base_python

ROOT = COURSE_ROOT
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")

# As root on these machines Chromium needs --no-sandbox; without the background-networking
# flags it keeps trying to reach Google's hosts through a closed network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def assignments() -> list[str]:
    """The notebooks, in the registry's order."""
    return registry.load().ids


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def completed_notebook(assignment: str) -> nbformat.NotebookNode:
    """The student notebook with every exercise done: each solution cell holds the solution
    from ``solutions/`` (without the solution markers); the visible test cells are kept."""
    return anatomy.complete(
        anatomy.read_released(assignment),
        anatomy.solution_sources(anatomy.read_solution(assignment)),
    )


# -- JupyterLab -----------------------------------------------------------------------------


def browser_skip_reason() -> str | None:
    """Why the browser test cannot run here, or None when it can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (pip install -e '.[dev]')"
    if not CHROMIUM.exists():
        return (
            f"{CHROMIUM} is missing: install Debian's chromium package (`make system-packages` "
            "does where apt-get can; Playwright's own browser download is not used)"
        )
    return None


@dataclass
class Lab:
    """A running JupyterLab server."""

    url: str
    token: str
    root_dir: Path
    process: subprocess.Popen
    log: Path

    def notebook_url(self, path: str) -> str:
        return f"{self.url}/lab/tree/{path}?token={self.token}&reset"

    def wait_for_kernel(self, path: str, timeout: float) -> None:
        """Wait until the notebook at ``path`` has a started, idle kernel with the page
        connected to it.

        The page's own status indicator says "idle" before any kernel exists, and a Run All
        clicked then runs nothing (JupyterLab skips cells without a kernel); the server's
        session list knows better: the kernel's state and its open connections.
        """
        deadline = time.monotonic() + timeout
        while True:
            with urllib.request.urlopen(f"{self.url}/api/sessions?token={self.token}") as r:
                sessions = json.load(r)
            kernels = [s["kernel"] for s in sessions if s.get("path") == path and s.get("kernel")]
            if any(k["execution_state"] == "idle" and k["connections"] > 0 for k in kernels):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"no idle, connected kernel for {path} after {timeout} s")
            time.sleep(0.3)


LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}


@contextlib.contextmanager
def jupyter_lab(
    root_dir: Path, workdir: Path, timeout: float = 60.0, cwd: Path | None = None
) -> Iterator[Lab]:
    """Start ``jupyter lab`` on ``root_dir`` (a free loopback port, a fresh token), in
    ``cwd`` (nbgrader's formgrader reads the ``nbgrader_config.py`` found there).

    Settings, workspaces and runtime files go to ``workdir``, so the user's own JupyterLab
    set-up neither leaks in nor gets changed. The server is stopped on exit.
    """
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    env.update(
        JUPYTERLAB_SETTINGS_DIR=str(workdir / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(workdir / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(workdir / "runtime"),
        IPYTHONDIR=str(workdir / "ipython"),
        PYTHONUNBUFFERED="1",
    )
    # The course's environment first: nbgrader's server extension runs `jupyter` by name.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root_dir}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "getuid") and os.getuid() == 0:
        command.append("--allow-root")
    # A fresh user's settings, but no news pop-up over the notebook, and every cell in the
    # page (JupyterLab's windowing would leave cells out of view unrendered).
    for plugin, settings in LAB_SETTINGS.items():
        path = workdir / "settings" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))
    log = workdir / "jupyter-lab.log"
    handle = log.open("wb")
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    lab = Lab(f"http://127.0.0.1:{port}", token, root_dir, process, log)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited:\n{log.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{lab.url}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"jupyter lab did not answer within {timeout} s:\n"
                        f"{log.read_text(errors='replace')}"
                    ) from None
                time.sleep(0.3)
        yield lab
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        handle.close()


# -- Colab ----------------------------------------------------------------------------------

COLAB_STUB = '''"""Stand-in for Colab's ``google.colab`` (the course's Colab test).

On Colab this package is imported when the kernel starts; the notebooks' set-up cell only
checks ``"google.colab" in sys.modules``.
"""
'''


@dataclass
class ColabEnv:
    """A fresh virtual environment that looks like Colab to the notebooks."""

    venv: Path
    python: Path
    kernel_dirs: list[str]
    kernel_name: str
    source: Path  # what the set-up cell installs from: a copy of the checkout

    def site_packages(self) -> Path:
        return _purelib(self.python)


def repository_copy(destination: Path) -> Path:
    """Copy the files a push would publish (tracked and new, not ignored) to ``destination``.

    ``pip install git+https://github.com/...`` builds from such a clone; installing from
    this copy builds the same wheel, with today's working tree, and never from ``.venv`` or
    the editable install's ``egg-info``.
    """
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not source.is_file():  # deleted in the working tree
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return destination


def _purelib(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip())


def make_colab_env(workdir: Path, runtime: Path) -> ColabEnv:
    """A fresh venv with Colab's preinstalled packages at Colab's versions (``runtime``, the
    python of :func:`support.colab_image.colab_runtime`, not the course), a ``google.colab``
    stub imported at kernel start, and a kernelspec for it.

    The new venv sees the runtime's packages through a ``.pth`` file (as Colab's
    ``dist-packages``) and gets what the set-up cells install (the course, torch-geometric)
    into its own ``site-packages``, so the runtime stays as built for the next test.
    """
    venv = workdir / "venv"
    subprocess.run([base_python(), "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = ColabEnv(venv, python, [str(workdir / "kernels")], "colab-standin", workdir / "repo")
    site = env.site_packages()
    (site / "colab-runtime.pth").write_text(
        f"import site; site.addsitedir({str(_purelib(runtime))!r})\n"
    )
    stub = site / "google" / "colab"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text(COLAB_STUB)
    kernel_dir = workdir / "kernels" / env.kernel_name
    kernel_dir.mkdir(parents=True)
    ipython_dir = workdir / "ipython"
    (ipython_dir / "profile_default" / "startup").mkdir(parents=True)
    # Colab's kernel has google.colab loaded from the start: so does this one.
    (ipython_dir / "profile_default" / "startup" / "00-colab.py").write_text(
        "import google.colab  # noqa: F401\n"
    )
    write_kernelspec(kernel_dir, python, {"IPYTHONDIR": str(ipython_dir)})
    repository_copy(env.source)
    return env


def execute_on_kernelspec(
    notebook: nbformat.NotebookNode, kernel_dirs: list[str], kernel_name: str, cwd: Path, **options
) -> None:
    """Execute ``notebook`` in place on the kernelspec ``kernel_name`` of ``kernel_dirs`` (a
    :func:`write_kernelspec`), errors allowed, in ``cwd``; ``options`` go to nbclient. The
    kernel is shut down afterwards: nbclient ends only the kernels of managers it made
    (each of these, torch loaded, held about 350 MB until the test process ended)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    manager = KernelManager(
        kernel_name=kernel_name, kernel_spec_manager=KernelSpecManager(kernel_dirs=kernel_dirs)
    )
    client = NotebookClient(
        notebook,
        km=manager,
        allow_errors=True,
        resources={"metadata": {"path": str(cwd)}},
        **options,
    )
    try:
        client.execute()
    finally:
        if manager.has_kernel:
            manager.shutdown_kernel(now=True)


def write_kernelspec(kernel_dir: Path, python: Path, env: dict[str, str]) -> None:
    """A kernelspec in ``kernel_dir`` that starts ``python``'s ipykernel with ``env``."""
    kernel_dir.mkdir(parents=True, exist_ok=True)
    (kernel_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": f"Python 3 ({kernel_dir.name})",
                "language": "python",
                # debugpy's frozen-modules note goes to the kernel's log, not to a cell
                "env": {"PYTHONNOUSERSITE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1", **env},
            }
        )
    )


def colab_version(notebook: nbformat.NotebookNode, source: Path) -> nbformat.NotebookNode:
    """The notebook with its set-up cell installing from ``source`` instead of GitHub."""
    copy = nbformat.from_dict(notebook)
    setup = next(c for c in copy.cells if anatomy.has_tag(c, anatomy.SETUP_TAG))
    pattern = re.compile(r'"git\+https://github\.com/[\w.-]+/[\w.-]+@[\w./-]+"')
    if not pattern.search(setup.source):
        raise AssertionError(f"no git+https install in the set-up cell:\n{setup.source}")
    setup.source = pattern.sub(f'"{source}"', setup.source)
    return copy


# -- The self-study edition -------------------------------------------------------------


def colab_target(url: str) -> Path:
    """The file of this checkout that a Colab badge's ``url`` opens: its path after
    ``blob/<ref>/``, in the repository a release publishes."""
    return COURSE_ROOT / url.split("/blob/", 1)[1].split("/", 1)[1]


def learner_case(assignment: str):
    """A wrong answer of ``tests/grading_cases`` that passes the visible tests and that only
    the hidden tests (the edition's further tests) catch: one with a message if any."""
    from instructor.grading_cases import load_cases

    hidden = [c for c in load_cases(assignment) if c.hidden]
    return ([c for c in hidden if c.message] or hidden)[0]


def wrong_option_id(question: str, option: str) -> str:
    """The id of the cell that sets ``question`` to ``option`` (a cell id allows letters,
    digits, ``-`` and ``_``: a number's ``.`` becomes ``_``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"wrong-{question}-{option}")


def wrong_attempts(assignment: str, edition: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The cells a learner's wrong attempts add at the end of the self-study edition ``edition``
    (completed): each concept question set to each wrong option ``course.toml`` explains, with
    its check (``wrong-<question>-<option>``); an exercise replaced by :func:`learner_case`
    with its further tests (``wrong-exercise``); ``reveal`` of that exercise (``reveal``); the
    progress cell again (``progress-again``)."""

    def source_of(tag: str) -> dict[str, str]:
        prefix = f"{tag}-"
        return {
            c.id.removeprefix(prefix): c.source for c in edition.cells if anatomy.has_tag(c, tag)
        }

    checks, further = source_of("self-study-check"), source_of("self-study-further")
    cells = []
    for question in registry.load().notebook(assignment).concept_questions:
        for key in question.wrong:
            answer = f'"{key}"' if question.kind == "choice" else key
            cells.append(
                (
                    wrong_option_id(question.name, key),
                    f"{question.name} = {answer}\n{checks[question.name]}",
                )
            )
    case = learner_case(assignment)
    cells.append(("wrong-exercise", f"{case.source}\n{further[case.function]}"))
    cells.append(("reveal", f'reveal("{case.function}")'))
    progress = next(c for c in edition.cells if anatomy.has_tag(c, "self-study-progress"))
    cells.append(("progress-again", progress.source))
    return [nbformat.v4.new_code_cell(source, id=cell_id) for cell_id, source in cells]
