"""Colab's preinstalled packages at Colab's versions (``colab_runtime.txt``), as a virtual
environment: built once per set of pins and interpreter, then only read.

Standard library only, so that ``make test`` can build it with the base interpreter while
the course's own environment installs (two single-threaded pip runs on two cores):
``python3 tests/support/colab_image.py``, into :data:`PYTEST_CACHE`. Otherwise the first
test that needs it builds it (:func:`colab_runtime`); a lock file makes every other one, in
this run or beside it, wait for that build.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# What Colab preinstalls and the notebooks touch, at Colab's versions (the list names its
# source and date). torch is the course machines' CPU wheel.
COLAB_RUNTIME = Path(__file__).with_name("colab_runtime.txt")

CACHE_NAME = "colab-runtime"
PYTEST_CACHE = Path(__file__).resolve().parents[2] / ".pytest_cache" / "d" / CACHE_NAME
"""Where :func:`runtime_cache` points in a checkout with pytest's default cache folder."""

VERSIONS = """import importlib.metadata, json, re, sys
print(json.dumps({re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower(): d.version
                  for d in importlib.metadata.distributions()}))"""
"""Prints the installed distributions' versions, as ``{normalised name: version}``."""


def colab_pins(path: Path = COLAB_RUNTIME) -> dict[str, str]:
    """``{normalised name: version}`` of the pinned list (``name==version`` lines)."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def base_python() -> str:
    """The base interpreter, not a venv's: a new venv must not see the course's packages.
    Resolved, so that the course's venv (``python3.11``) and ``make``'s ``python3`` name the
    same interpreter in :func:`colab_runtime`'s key."""
    found = getattr(sys, "_base_executable", None) or shutil.which("python3") or sys.executable
    return os.path.realpath(found)


def colab_runtime(cache: Path) -> Path:
    """A virtual environment with exactly the pinned list (Colab's versions) and nothing of
    the course; its ``bin/python``.

    Built once per set of pins and interpreter (about 35 s with pip's cache warm) into
    ``cache/runtime-<hash>`` and then only read (but for the byte-code its kernels write on
    first import): the Colab test layers its fresh environment over it, the plotting tests
    run a kernel of it. A lock file makes concurrent builders wait for one build; an older
    list's build is removed.
    """
    digest = hashlib.sha256(json.dumps(colab_pins(), sort_keys=True).encode())  # not comments
    digest.update(f"{base_python()} {sys.version}".encode())
    key = f"runtime-{digest.hexdigest()[:16]}"
    venv, python = cache / key, cache / key / "bin" / "python"
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / "complete").exists():
            return python
        for old in cache.glob("runtime-*"):
            shutil.rmtree(old, ignore_errors=True)
        subprocess.run([base_python(), "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet"]
        quiet = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        # Today's pip installs the list (the venv's bundled 23.2 took 44 CPU-s, today's 34);
        # the notebooks' own %pip runs the Colab test's environment's, not this one.
        subprocess.run([*pip, "--upgrade", "pip"], check=True, env=quiet)
        # Byte-code at install, in `make test`'s set-up: the kernels import most of it (torch
        # above all), and compiling it then costs as much as here, on a busier machine.
        subprocess.run([*pip, "-r", str(COLAB_RUNTIME)], check=True, env=quiet)
        installed = json.loads(
            subprocess.run(
                [str(python), "-c", VERSIONS], check=True, capture_output=True, text=True
            ).stdout
        )
        wrong = {
            name: (version, installed.get(name))
            for name, version in colab_pins().items()
            if installed.get(name, "").split("+")[0] != version
        }
        if wrong:
            raise RuntimeError(f"pip did not install the pinned versions: {wrong}")
        (venv / "complete").write_text(COLAB_RUNTIME.read_text())
    return python


def runtime_cache(config: object) -> Path:
    """Where :func:`colab_runtime` keeps its build: pytest's cache folder
    (``.pytest_cache/d/colab-runtime``, git-ignored; ``--cache-clear`` removes it), else a
    folder in the system's temp dir."""
    cache = getattr(config, "cache", None)
    if cache is not None:
        return cache.mkdir(CACHE_NAME)
    return Path(tempfile.gettempdir()) / "self-attention-colab-runtime"


if __name__ == "__main__":
    print(f"Colab's runtime: {colab_runtime(PYTEST_CACHE)}")
