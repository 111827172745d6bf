"""The course's own JupyterHub: ``make hub`` (``python -m instructor.hub``).

Starts a JupyterHub on 127.0.0.1 for the course, from files in the repository:
``hub/roster.toml`` (the accounts and the course id), ``hub/jupyterhub_config.py`` (which
calls :func:`configure`) and ``hub/package-lock.json`` (configurable-http-proxy, installed
by ``npm ci`` into ``hub/node_modules``). Before the hub starts, :func:`prepare` makes
what nbgrader's exchange needs and what a new instructor would otherwise get wrong
(docs/jupyterhub.md says why each is there):

- the exchange root, ``<state>/exchange``, with the course's folder made beforehand and
  owned by the instructor, so that no student can create it first and own the course's
  inbox; ``rwxrwxrwt`` (everyone may create, nobody may remove or rename what another
  made). By default hand-ins go to the hub's hand-in service (:mod:`instructor.handin`,
  run as the instructor's user, with its store in ``<state>/handin``), which takes the
  student from the hub's token and the time from its own clock, and the course's
  ``inbound/`` is the instructor's alone; with ``--exchange folder``, nbgrader's shared
  inbound;
- as root, every account of the roster as a system user (``useradd``) with a home of its
  own in ``<state>/homes`` that only its owner may enter (Debian's ``useradd`` makes homes
  readable by all), run by JupyterHub's ``LocalProcessSpawner``: how a single-server hub
  (The Littlest JupyterHub) runs. Not as root, every account runs as the user who started
  the hub (``SimpleLocalProcessSpawner``): a demo of the pages, with no permissions between
  accounts, and the launcher says so;
- the instructor's nbgrader course folder, ``~instructor/<course>/``, whose
  ``nbgrader_config.py`` loads the repository's ``autograder/nbgrader_config.py`` and takes
  ``solutions/`` and ``notebooks/`` from the checkout; ``nbgrader collect`` collects from
  the hand-in service's store (:class:`instructor.exchange.HubCollect`), or with
  ``--exchange folder`` and real users a submission only from its owner
  (:class:`instructor.exchange.OwnerCheckedCollect`);
- one Jupyter configuration folder per role (``<state>/config/<role>``, the single-user
  server's ``JUPYTER_CONFIG_PATH``): nbgrader's exchange settings for both, the
  assignment list and validation for students (formgrader's server extension off), and
  formgrader and the course list for instructors, whose server alone lets pages of its own
  origin frame it (``frame-ancestors 'self'``; JupyterHub >= 4.1 sends ``'none'``, which
  leaves formgrader's panel in JupyterLab blank);
- as root, the course's environment in the login shells of the hub's users (JupyterLab's
  terminal is one, as are ``ssh`` and ``runuser -l``): ``/etc/profile.d/course-hub-<id>.sh``
  puts the course's Python first on ``PATH`` (Debian's ``/etc/profile`` resets it) and sets
  the role's ``JUPYTER_CONFIG_PATH``, for users whose home is in ``<state>/homes`` only;
  marked with the state folder, removed by :func:`remove_environment_scripts`.

The hub's own state (database, cookie secret, password) lives in ``<state>``
(``hub/state`` by default, git-ignored).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from instructor.paths import COURSE_ROOT

__all__ = [
    "HUB_DIR",
    "HubSettings",
    "Roster",
    "configure",
    "main",
    "prepare",
    "remove_environment_scripts",
    "skip_reason",
]

HUB_DIR = COURSE_ROOT / "hub"
PROXY = HUB_DIR / "node_modules" / ".bin" / "configurable-http-proxy"
SETTINGS_VARIABLE = "COURSE_HUB_SETTINGS"
"""The environment variable through which ``hub/jupyterhub_config.py`` finds the settings."""

USER_COMMENT = "self-attention course hub"
"""The GECOS field of the system users the hub makes (how a test finds its leftovers)."""
PROFILE_DIR = Path("/etc/profile.d")
"""Where the environment script of the hub's login shells goes (read by ``/etc/profile``)."""
SCRIPT_MARK = "# course-hub-state: "
"""The line that marks an environment script as a course hub's, naming its state folder."""
NAME = re.compile(r"^[a-z][a-z0-9-]{0,30}$")
# Submissions larger than this (all files together, and any one file) are refused by
# `nbgrader submit` with "Directory size is too big": the course's notebooks are < 1 MB.
SUBMISSION_LIMIT_KB = 5_000
HANDIN_SERVICE = "handin"
"""The hand-in service's name on the hub (instructor/handin.py's ``SERVICE_NAME``)."""
# What the hand-in service keeps per student: hand-ins of one assignment, bytes in all.
HANDIN_HAND_INS = 50
HANDIN_STUDENT_BYTES = 100_000_000

# nbgrader's JupyterLab plugins (@jupyter/nbgrader 0.9.6) each role does not get. Hiding a
# plugin is a convenience, not a permission: what protects the gradebook is that it sits in
# the instructor's home, which no student can enter.
LAB_PLUGINS_OFF = {
    "student": [
        "@jupyter/nbgrader:formgrader",
        "@jupyter/nbgrader:course-list",
        "@jupyter/nbgrader:create-assignment",
    ],
    "instructor": [
        "@jupyter/nbgrader:assignment-list",
        "@jupyter/nbgrader:validate-assignment",
    ],
}
LAB_SETTING_DEFAULTS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}
}
"""Defaults of JupyterLab's settings for every account (``labconfig``'s overrides)."""
STUDENT_VALIDATION = """
# Validate shows each failing test's name and the course's message first and whole
# (instructor/validation.py), as the course's configuration does for nbgrader validate.
from instructor.validation import use_course_validation  # noqa: E402

use_course_validation()
"""
SERVER_EXTENSIONS_OFF = {
    "student": ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"],
    "instructor": ["nbgrader.server_extensions.assignment_list"],
}
# Formgrader's panel in JupyterLab is an iframe of /user/<name>/formgrader, a page of the
# same server. JupyterHub >= 4.1 sends "frame-ancestors 'none'" from every single-user
# server (it keeps other users' pages, on the same origin, from framing yours), so the panel
# stays blank (nbgrader #1870). 'self' lets pages of the server's own origin frame it and
# nothing else; only instructors' servers get it.
INSTRUCTOR_CSP = "frame-ancestors 'self'"


class HubError(RuntimeError):
    """The hub cannot be set up as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Roster:
    """The course id and the hub's accounts (``hub/roster.toml``)."""

    course: str
    instructors: tuple[str, ...]
    students: tuple[str, ...]

    @classmethod
    def load(cls, path: Path) -> Roster:
        data = tomllib.loads(path.read_text())
        roster = cls(
            str(data["course"]),
            tuple(data.get("instructors", ())),
            tuple(data.get("students", ())),
        )
        names = roster.instructors + roster.students
        bad = [n for n in names if not NAME.match(n)]
        if bad or len(set(names)) != len(names) or not roster.instructors:
            raise HubError(
                f"{path}: names must be unique, lower-case letters, digits and '-', with at "
                f"least one instructor (not valid: {bad or 'a repeated name'})"
            )
        return roster

    @property
    def users(self) -> tuple[str, ...]:
        return self.instructors + self.students

    def role(self, name: str) -> str:
        return "instructor" if name in self.instructors else "student"


@dataclass(frozen=True)
class HubSettings:
    """Everything ``hub/jupyterhub_config.py`` needs, written by :func:`prepare` as JSON."""

    roster: Roster
    state: Path
    password: str
    port: int = 8000
    hub_port: int = 8081
    proxy_api_port: int = 8001
    handin_port: int = 8002
    handin_service: bool = True
    """Hand-ins go to the hub's hand-in service (instructor/handin.py), which takes the
    student from the hub's token and the time from its own clock, into a store only the
    instructor may write; off, nbgrader's shared-folder inbound/ as before."""
    handin_hand_ins: int = HANDIN_HAND_INS
    handin_student_bytes: int = HANDIN_STUDENT_BYTES
    real_users: bool = field(default_factory=lambda: os.geteuid() == 0)
    submission_limit_kb: int = SUBMISSION_LIMIT_KB
    course_root: Path = COURSE_ROOT
    profile_dir: Path = PROFILE_DIR

    @property
    def exchange(self) -> Path:
        return self.state / "exchange"

    @property
    def handin_store(self) -> Path:
        """The hand-in service's store: ``<store>/<course>/inbound/``, the instructor's."""
        return self.state / "handin"

    @property
    def handin_url(self) -> str:
        """Where the students' ``nbgrader submit`` reaches the hand-in service."""
        return f"http://127.0.0.1:{self.handin_port}/services/{HANDIN_SERVICE}/"

    def handin_quota(self) -> Any:
        from instructor.handin import Quota

        limit = 1000 * self.submission_limit_kb
        return Quota(
            file_bytes=limit,
            hand_in_bytes=limit,
            hand_ins=self.handin_hand_ins,
            student_bytes=self.handin_student_bytes,
        )

    def home(self, name: str) -> Path:
        return self.state / "homes" / name

    def course_folder(self, instructor: str) -> Path:
        """The instructor's nbgrader course root (gradebook, submitted/, feedback/)."""
        return self.home(instructor) / self.roster.course

    def config_folder(self, role: str) -> Path:
        return self.state / "config" / role

    @property
    def environment_script(self) -> Path:
        """This hub's script in ``/etc/profile.d``: one per state folder, so that hubs of
        other state folders (a test's beside a person's) keep theirs."""
        digest = hashlib.sha256(str(self.state).encode()).hexdigest()[:12]
        return self.profile_dir / f"course-hub-{digest}.sh"

    @property
    def file(self) -> Path:
        return self.state / "hub-settings.json"

    def save(self) -> None:
        data = asdict(self)
        data["roster"] = asdict(self.roster)
        self.file.write_text(json.dumps(data, default=str, indent=1))
        self.file.chmod(0o600)  # holds the password

    @classmethod
    def read(cls, path: Path) -> HubSettings:
        data = json.loads(path.read_text())
        roster = data.pop("roster")
        roster = Roster(roster["course"], tuple(roster["instructors"]), tuple(roster["students"]))
        return cls(
            roster=roster,
            state=Path(data.pop("state")),
            course_root=Path(data.pop("course_root")),
            profile_dir=Path(data.pop("profile_dir", PROFILE_DIR)),
            **data,
        )


def skip_reason() -> str | None:
    """Why a hub cannot start here, or None (the hub test skips with this reason)."""
    if shutil.which("node") is None:
        return "no Node.js (`node`): configurable-http-proxy needs it (docs/jupyterhub.md)"
    if not PROXY.exists():
        return f"{PROXY} is missing: run `npm ci` in hub/ (`make hub` and `make test` do)"
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        return "jupyterhub is not installed (pip install -e '.[hub]')"
    return None


# -- preparing the machine ------------------------------------------------------------------


def _run_command(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True, text=True)


def ensure_system_user(name: str, home: Path) -> pwd.struct_passwd:
    """The system user ``name`` with its home at ``home``, made with ``useradd`` if missing.

    A user that exists with another home was not made by the hub: it is not taken over.
    """
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        home.parent.mkdir(parents=True, exist_ok=True)
        _run_command("useradd", "--create-home", "--home-dir", str(home), "--user-group",
             "--shell", "/bin/bash", "--comment", USER_COMMENT, name)  # fmt: skip
        entry = pwd.getpwnam(name)
    if Path(entry.pw_dir).resolve() != home.resolve():
        raise HubError(
            f"the system user {name!r} exists with the home {entry.pw_dir}, not {home}: it "
            "was not made by this hub; rename the account in the roster"
        )
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    # Debian's useradd makes homes rwxr-xr-x (login.defs has no HOME_MODE): every student
    # could read every other's notebooks and nbgrader's submission cache.
    home.chmod(0o700)
    return entry


def make_reachable(path: Path) -> list[Path]:
    """Let every user reach ``path`` (search permission, ``o+x``, on each folder above it
    that lacks it); the folders changed.

    The accounts' servers run the course's Python. A virtual environment built on a Python
    under ``/root`` (pyenv's default as root) cannot be started by any other user; the
    folders get ``o+x`` only (enter, not list), which is what a system Python has.
    """
    changed = []
    for folder in reversed(path.resolve().parents):
        mode = folder.stat().st_mode
        if not mode & 0o001:
            folder.chmod(mode | 0o001)
            changed.append(folder)
    return changed


def _write_owned(path: Path, text: str, owner: pwd.struct_passwd | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if owner is not None:
        os.chown(path.parent, owner.pw_uid, owner.pw_gid)
        os.chown(path, owner.pw_uid, owner.pw_gid)


def exchange_settings(settings: HubSettings) -> str:
    """nbgrader settings both roles share: the course, the exchange, who takes the course."""
    limit = settings.submission_limit_kb
    return f"""c.CourseDirectory.course_id = {settings.roster.course!r}
c.Exchange.root = {str(settings.exchange)!r}
# Each course has its own folder in the exchange and in the student's home.
c.Exchange.path_includes_course = True
# Who takes which course: the JupyterHub groups nbgrader-<course> and formgrade-<course>.
c.Authenticator.plugin_class = "nbgrader.auth.JupyterHubAuthPlugin"
# A submission without the released notebook (renamed, deleted) is refused, not sent.
c.ExchangeSubmit.strict = True
# A submission over {limit} kB, or holding a file over it, is refused with
# "Directory size is too big" (equal limits: a file over the limit fails the whole
# submission instead of being left out of it without a word).
c.CourseDirectory.max_dir_size = {limit}
c.CourseDirectory.max_file_size = {limit}
{handin_submit(settings)}"""


def handin_submit(settings: HubSettings) -> str:
    """The nbgrader settings that send hand-ins to the hub's hand-in service."""
    if not settings.handin_service:
        return ""
    return f"""# A hand-in goes to the hub's hand-in service, which takes the student from the hub's
# token and the time from its own clock (instructor/handin.py); not into inbound/.
c.ExchangeFactory.submit = "instructor.exchange.HubSubmit"
c.HubSubmit.service_url = {settings.handin_url!r}
"""


def instructor_course_config(settings: HubSettings) -> str:
    """The instructor's ``<course>/nbgrader_config.py``: the repository's, on this hub."""
    root = settings.course_root
    if settings.handin_service:
        collect = (
            "# Hand-ins are collected from the hand-in service's store, which only this\n"
            "# user (the service's) can write (instructor/handin.py).\n"
            'c.ExchangeFactory.collect = "instructor.exchange.HubCollect"\n'
            f"c.HubCollect.store = {str(settings.handin_store)!r}\n"
        )
    elif settings.real_users:
        collect = (
            "# A submission is collected only from its owner (nbgrader only warns).\n"
            'c.ExchangeFactory.collect = "instructor.exchange.OwnerCheckedCollect"\n'
        )
    else:
        collect = "# Not root: every account is one system user, so no owner check on collect.\n"
    return f'''"""The course on this hub, written by `make hub` (instructor/hub.py); edit freely.

It loads the course's own configuration from the checkout, then points nbgrader at this
folder (gradebook, submitted/, autograded/, feedback/) and at the hub's exchange. Due
dates and the late penalty go here, as in autograder/nbgrader_config.py, e.g.
c.Deadlines.due_dates = {{"01_vector_sets": "2026-11-20 23:59:00 Europe/Paris"}}
c.LateSubmissionPlugin.penalty_method = "zero"
"""

c = get_config()  # noqa: F821
load_subconfig({str(root / "autograder" / "nbgrader_config.py")!r})  # noqa: F821
c.CourseDirectory.root = {str(settings.course_folder(settings.roster.instructors[0]))!r}
c.CourseDirectory.source_directory = {str(root / "solutions")!r}
c.CourseDirectory.release_directory = {str(root / "notebooks")!r}
{exchange_settings(settings)}{collect}'''


def role_config(settings: HubSettings, role: str, instructor_course: Path) -> None:
    """The Jupyter configuration folder of ``role``: nbgrader, server extensions, lab."""
    folder = settings.config_folder(role)
    server: dict[str, Any] = {
        "ServerApp": {"jpserver_extensions": dict.fromkeys(SERVER_EXTENSIONS_OFF[role], False)},
        # A hub's users need no news or update checks from the internet in their lab.
        "LabApp": {
            "news_url": None,
            "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
        },
    }
    if role == "instructor":
        server["ServerApp"]["tornado_settings"] = {
            "headers": {"Content-Security-Policy": INSTRUCTOR_CSP}
        }
        # The grading page by question (instructor.grading_page) on the instructor's course
        # folder: graders are the hub group formgrade-<course>, as for formgrader.
        server["ServerApp"]["jpserver_extensions"]["instructor.grading_page"] = True
        server["RubricGradingPage"] = {"course_root": str(instructor_course)}
        nbgrader = (
            '"""Instructors: the course folder\'s configuration (written by make hub)."""\n'
            "c = get_config()  # noqa: F821\n"
            f"load_subconfig({str(instructor_course / 'nbgrader_config.py')!r})  # noqa: F821\n"
        )
    else:
        nbgrader = (
            '"""Students: the course and its exchange (written by make hub)."""\n'
            "c = get_config()  # noqa: F821\n" + exchange_settings(settings) + STUDENT_VALIDATION
        )
    _write_owned(folder / "jupyter_server_config.json", json.dumps(server, indent=1))
    page = {"disabledExtensions": dict.fromkeys(LAB_PLUGINS_OFF[role], True)}
    _write_owned(folder / "labconfig" / "page_config.json", json.dumps(page, indent=1))
    # JupyterLab asks every new user whether to fetch "official Jupyter news" unless its
    # setting has a value; news_url=None above only stops the fetching.
    _write_owned(
        folder / "labconfig" / "default_setting_overrides.json",
        json.dumps(LAB_SETTING_DEFAULTS, indent=1),
    )
    _write_owned(folder / "nbgrader_config.py", nbgrader)


def environment_script(settings: HubSettings) -> str:
    """The login shells' part of the course's environment, as a POSIX ``sh`` script.

    JupyterLab's terminal runs the user's shell as a login shell (jupyter_server_terminals
    adds ``-l`` when the server has no terminal of its own, as under a spawner), and so do
    ``ssh`` and ``runuser -l``: Debian's ``/etc/profile`` then sets ``PATH`` anew, without
    the course's environment that the server itself runs in, and sources
    ``/etc/profile.d/*.sh`` after it. This script puts the environment's ``bin`` first on
    ``PATH`` (once) and sets the role's ``JUPYTER_CONFIG_PATH``, as the spawner does for the
    servers, only for users whose home is in this hub's ``homes`` folder; any other user's
    shell is left as it was. The user's own ``~/.profile`` comes after it and may change it.
    """
    homes = settings.state / "homes"
    venv_bin = shlex.quote(str(Path(sys.executable).parent))
    instructors = "|".join(shlex.quote(str(settings.home(n))) for n in settings.roster.instructors)
    instructor_config = shlex.quote(str(settings.config_folder("instructor")))
    student_config = shlex.quote(str(settings.config_folder("student")))
    return f"""# Written by `make hub` (instructor/hub.py, docs/jupyterhub.md): the course's
# environment in the login shells (JupyterLab's terminal, ssh, runuser -l) of the course
# hub's users, whose homes are in {homes}. Debian's /etc/profile resets PATH;
# this puts the course's Python first. Other users' shells are left as they are. The hub
# writes it again at each start; remove it with the hub's users.
{SCRIPT_MARK}{settings.state}
case "$HOME" in
  {instructors})
    JUPYTER_CONFIG_PATH={instructor_config}
    ;;
  {shlex.quote(str(homes))}/*)
    JUPYTER_CONFIG_PATH={student_config}
    ;;
esac
case "$HOME" in
  {shlex.quote(str(homes))}/*)
    export JUPYTER_CONFIG_PATH
    case ":$PATH:" in
      *:{venv_bin}:*) ;;
      *) PATH={venv_bin}:"$PATH"; export PATH ;;
    esac
    ;;
esac
"""


def script_state(path: Path) -> Path | None:
    """The state folder a course hub's environment script names, or None if not one."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(SCRIPT_MARK):
            return Path(line[len(SCRIPT_MARK) :])
    return None


def remove_environment_scripts(
    profile_dir: Path = PROFILE_DIR, state: Path | None = None
) -> list[Path]:
    """Remove course hubs' environment scripts from ``profile_dir``; the files removed.

    Those of ``state`` (a hub's state folder), or with ``state`` None those whose state
    folder is gone (a test's hub that crashed, a state folder deleted): their users' homes
    went with it, so the script does nothing any more. Only files that carry the mark
    (:data:`SCRIPT_MARK`) are touched, as :func:`ensure_system_user`'s users carry theirs.
    """
    removed = []
    for path in sorted(profile_dir.glob("course-hub-*.sh")):
        named = script_state(path)
        if named is None:
            continue
        if state is not None:
            remove = named.resolve() == state.resolve()
        else:
            remove = not named.exists()
        if remove:
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def write_environment_script(settings: HubSettings) -> Path:
    """Write :func:`environment_script` into ``settings.profile_dir`` (root's, ``rw-r--r--``)."""
    path = settings.environment_script
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(environment_script(settings))
    partial.chmod(0o644)
    partial.replace(path)  # a login shell never reads half a script
    return path


def prepare(settings: HubSettings) -> list[str]:
    """Make the exchange, the accounts, the course folder and the role configurations.

    Returns what a person should know (what it fell back to). Running it again keeps what
    is there: the gradebook, submissions and homes survive a restart.
    """
    notes = []
    settings.state.mkdir(parents=True, exist_ok=True)
    settings.state.chmod(0o755)  # users' servers read their role's configuration here
    (settings.state / "homes").mkdir(exist_ok=True)
    (settings.state / "homes").chmod(0o755)
    owners: dict[str, pwd.struct_passwd | None] = {}
    for name in settings.roster.users:
        if settings.real_users:
            owners[name] = ensure_system_user(name, settings.home(name))
        else:
            settings.home(name).mkdir(parents=True, exist_ok=True)
            owners[name] = None
    if settings.real_users:
        python = Path(sys.executable).resolve()
        targets = (python, Path(sys.executable), settings.course_root / "course.toml")
        for target in (*targets, settings.state / "hub-settings.json"):
            for folder in make_reachable(target):
                notes.append(
                    f"made {folder} enterable by all (o+x): the accounts' servers run "
                    f"{python} and read their configuration in {settings.state}"
                )
        for stale in remove_environment_scripts(settings.profile_dir):
            notes.append(f"removed {stale}: its hub's state folder is gone")
        script = write_environment_script(settings)
        notes.append(
            f"{script}: the course's Python ({Path(sys.executable).parent}) first on PATH in "
            "the login shells (JupyterLab's terminal, ssh) of the hub's users, whose homes "
            f"are in {settings.state / 'homes'}"
        )
    else:
        notes.append(
            "not root: every account runs as this user (SimpleLocalProcessSpawner), homes in "
            f"{settings.state / 'homes'}; nothing keeps one account from another's files, "
            "and collect does not check who owns a submission. Run as root for real users."
        )
        notes.append(
            "not root: nothing is written to /etc/profile.d, and a JupyterLab terminal's login "
            "shell resets PATH: type `. "
            f"{shlex.quote(str(Path(sys.executable).parent / 'activate'))}` there first"
        )
    # The exchange: anyone may create in it (nbgrader's own default: every nbgrader command
    # checks that its user may write there, and release_assignment makes it rwxrwxrwx),
    # nobody may remove or rename what another made (the sticky bit); the course's folder
    # is the instructor's before any student can make it.
    settings.exchange.mkdir(exist_ok=True)
    settings.exchange.chmod(0o1777)
    instructor = settings.roster.instructors[0]
    course_exchange = settings.exchange / settings.roster.course
    course_exchange.mkdir(exist_ok=True)
    course_exchange.chmod(0o755)
    course = settings.course_folder(instructor)
    course.mkdir(exist_ok=True)
    made = [course_exchange, course]
    if settings.handin_service:
        # Hand-ins are kept by the hand-in service (as the instructor) in a store no student
        # may enter; the exchange's inbound/ is the instructor's alone, so nothing a student
        # writes by hand lies where a collect could look (nbgrader makes it rwx-wx-wx).
        inbound = course_exchange / "inbound"
        for folder in (settings.handin_store, inbound):
            folder.mkdir(exist_ok=True)
            folder.chmod(0o700)
        made += [settings.handin_store, inbound]
    elif (course_exchange / "inbound").is_dir():
        # Back from the hand-in service: nbgrader's own mode, writable by all, not listable.
        (course_exchange / "inbound").chmod(0o733)
    if owners[instructor] is not None:
        entry = owners[instructor]
        for folder in made:
            os.chown(folder, entry.pw_uid, entry.pw_gid)
    config = course / "nbgrader_config.py"
    if not config.exists():  # the instructor's own edits (due dates) survive a restart
        _write_owned(config, instructor_course_config(settings), owners[instructor])
    elif settings.handin_service and "HubCollect" not in config.read_text(errors="replace"):
        notes.append(
            f"{config} was written before the hand-in service: nbgrader collect there still "
            "reads the shared inbound/, where no hand-in goes now. Add:\n"
            '    c.ExchangeFactory.collect = "instructor.exchange.HubCollect"\n'
            f"    c.HubCollect.store = {str(settings.handin_store)!r}"
        )
    for role in ("student", "instructor"):
        role_config(settings, role, course)
    if len(settings.roster.instructors) > 1:
        notes.append(
            f"the course folder is {instructor}'s; other instructors grade in {instructor}'s "
            f"server (/user/{instructor}/rubric-grading, formgrader), which the hub lets "
            "them open; their own servers' formgrader does not reach that folder"
        )
    settings.save()
    return notes


# -- the hub's configuration -------------------------------------------------------------------


def _role_hook(settings: HubSettings):
    """A ``Spawner.pre_spawn_hook`` that gives each server its role's configuration."""

    def hook(spawner: Any) -> None:
        role = settings.roster.role(spawner.user.name)
        spawner.environment = {
            **spawner.environment,
            "JUPYTER_CONFIG_PATH": str(settings.config_folder(role)),
        }

    return hook


def configure(c: Any, settings: HubSettings) -> None:
    """Set JupyterHub's configuration ``c`` (``hub/jupyterhub_config.py`` calls this)."""
    roster, state = settings.roster, settings.state
    venv_bin = Path(sys.executable).parent
    c.JupyterHub.ip = "127.0.0.1"
    c.JupyterHub.port = settings.port
    c.JupyterHub.hub_ip = "127.0.0.1"
    c.JupyterHub.hub_port = settings.hub_port
    c.ConfigurableHTTPProxy.command = [str(PROXY)]
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings.proxy_api_port}"
    c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
    c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
    c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
    # The dummy authenticator with a password: JupyterHub 5.3 moved DummyAuthenticator's
    # password into SharedPasswordAuthenticator. Only the roster's names may log in.
    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = settings.password
    c.Authenticator.allowed_users = set(roster.users)
    # nbgrader's JupyterHubAuthPlugin reads a user's courses from these groups.
    c.JupyterHub.load_groups = {
        f"nbgrader-{roster.course}": {"users": list(roster.students)},
        f"formgrade-{roster.course}": {"users": list(roster.instructors)},
    }
    # Graders (the group formgrade-<course>: the roster's instructors) may open the first
    # instructor's server, which holds the course folder and serves formgrader and the
    # grading page by question: nbgrader's way of grading with several graders, one shared
    # grading server. JupyterHub's scope is the whole server (its terminal included, as
    # that user), the same as nbgrader's shared formgrader service gives its graders.
    c.JupyterHub.load_roles = [
        {
            "name": "course-graders",
            "description": "open the course folder's server (formgrader, grading page)",
            "scopes": [f"access:servers!user={roster.instructors[0]}"],
            "groups": [f"formgrade-{roster.course}"],
        }
    ]
    # ... through the hub's API, with the server's own token: it may read its own user's
    # groups, nothing more (JupyterHub's default token cannot, so "No courses" otherwise).
    c.Spawner.server_token_scopes = [
        "users:activity!user",
        "access:servers!server",
        "read:users:groups!user",
    ]
    if settings.handin_service:
        handin_service(c, settings)
    if settings.real_users:
        c.JupyterHub.spawner_class = "localprocess"
    else:
        c.JupyterHub.spawner_class = "simple"
        c.SimpleLocalProcessSpawner.home_dir_template = str(state / "homes" / "{username}")
    c.Spawner.cmd = [str(venv_bin / "jupyterhub-singleuser")]
    c.Spawner.default_url = "/lab"
    # nbgrader's server extensions run `jupyter` and `alembic` by name.
    c.Spawner.environment = {"PATH": f"{venv_bin}{os.pathsep}/usr/local/bin:/usr/bin:/bin"}
    c.Spawner.pre_spawn_hook = _role_hook(settings)
    # A 2-core machine starting JupyterLab for several users at once is slow.
    c.Spawner.start_timeout = 180
    c.Spawner.http_timeout = 180


def handin_service(c: Any, settings: HubSettings) -> None:
    """The hand-in service (instructor/handin.py) as a service the hub starts, run as the
    instructor's system user; the servers' tokens may reach it (and nothing else of it)."""
    quota = settings.handin_quota()
    command = [
        sys.executable, "-m", "instructor.handin",
        "--course", settings.roster.course,
        "--store", str(settings.handin_store),
        "--exchange", str(settings.exchange),
    ]  # fmt: skip
    for name, value in vars(quota).items():
        command += [f"--{name.replace('_', '-')}", str(value)]
    service: dict[str, Any] = {
        "name": HANDIN_SERVICE,
        "url": f"http://127.0.0.1:{settings.handin_port}",
        "command": command,
        "cwd": str(settings.handin_store),
        "environment": {"PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin"},
    }
    if settings.real_users:
        service["user"] = settings.roster.instructors[0]
    c.JupyterHub.services = [service]
    # A token may hold only scopes its user holds: the course's users may reach the service
    # (which takes hand-ins from the students' group alone).
    course = settings.roster.course
    c.JupyterHub.load_roles = [
        *c.JupyterHub.load_roles,
        {
            "name": "course-handin",
            "description": "reach the course's hand-in service",
            "scopes": [f"access:services!service={HANDIN_SERVICE}"],
            "groups": [f"nbgrader-{course}", f"formgrade-{course}"],
        },
    ]
    c.Spawner.server_token_scopes = [
        *c.Spawner.server_token_scopes,
        f"access:services!service={HANDIN_SERVICE}",
    ]


# -- the command ------------------------------------------------------------------------------


def password_for(state: Path) -> str:
    """The hub's shared password: made once, kept in ``<state>/password`` (owner only)."""
    path = state / "password"
    if not path.exists():
        state.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(12))
        path.chmod(0o600)
    return path.read_text().strip()


PROXY_API_OFFSET = 1
HANDIN_OFFSET = 2
HUB_OFFSET = 81
"""The hub takes four loopback ports: ``--port P`` (the proxy, where people connect),
P+1 (the proxy's API), P+2 (the hand-in service) and P+81 (the hub itself), JupyterHub's
own 8000/8001/8081."""


def ports(port: int) -> dict[str, int]:
    """The ports a hub on ``port`` takes, by what each is for."""
    return {
        "the hub's address (the proxy)": port,
        "the proxy's API": port + PROXY_API_OFFSET,
        "the hand-in service": port + HANDIN_OFFSET,
        "the hub itself": port + HUB_OFFSET,
    }


def busy_ports(port: int, host: str = "127.0.0.1") -> list[str]:
    """The ports of :func:`ports` another program holds, each named with its use."""
    busy = []
    for use, number in ports(port).items():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, number))
            except OSError:
                busy.append(f"{number} ({use})")
    return busy


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is no port number") from None
    if not 1024 <= value <= 65535 - HUB_OFFSET:
        raise argparse.ArgumentTypeError(f"give a port from 1024 to {65535 - HUB_OFFSET}")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m instructor.hub",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--roster",
        type=Path,
        default=HUB_DIR / "roster.toml",
        help="the course's accounts: a TOML file with course, instructors and students "
        "(default: hub/roster.toml)",
    )
    parser.add_argument(
        "--state",
        type=Path,
        default=HUB_DIR / "state",
        help="the folder of the hub's state: its database, the exchange, the settings "
        "(default: hub/state; kept between runs)",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=8000,
        help="the port people open, on 127.0.0.1 (default 8000). The hub also takes PORT+1 "
        "(the proxy's API) and PORT+81 (the hub itself), and PORT+2 (the hand-in service): "
        "two hubs need ports at least 82 apart. All are checked before the hub starts.",
    )
    parser.add_argument(
        "--exchange",
        choices=("service", "folder"),
        default="service",
        help="where hand-ins go: 'service' (default), the hub's hand-in service, which "
        "takes the student from the hub and the time from its own clock and keeps each "
        "hand-in where only the instructor may write; 'folder', nbgrader's shared inbound/ "
        "folder, which the student may rewrite after submitting (docs/jupyterhub.md)",
    )
    parser.add_argument(
        "--password", help="the password every account logs in with (default: made once, kept)"
    )
    args = parser.parse_args(argv)
    reason = skip_reason()
    if reason:
        sys.exit(f"cannot start the hub: {reason}")
    busy = busy_ports(args.port)
    if busy:
        sys.exit(
            f"cannot start the hub on port {args.port}: in use: {', '.join(busy)}. "
            "Stop what holds them, or pick another --port (at least 82 away from another hub)."
        )
    state = args.state.resolve()
    settings = HubSettings(
        roster=Roster.load(args.roster),
        state=state,
        password=args.password or password_for(state),
        port=args.port,
        hub_port=args.port + HUB_OFFSET,
        proxy_api_port=args.port + PROXY_API_OFFSET,
        handin_port=args.port + HANDIN_OFFSET,
        handin_service=args.exchange == "service",
    )
    try:
        notes = prepare(settings)
    except (HubError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or ""
        sys.exit(f"cannot set up the hub: {error} {detail}".strip())
    roster = settings.roster
    print(f"The course's hub: http://127.0.0.1:{settings.port}/  (Ctrl-C stops it)")
    print(f"  instructor: {', '.join(roster.instructors)}; students: {', '.join(roster.students)}")
    print(f"  password (every account): {settings.password}")
    course = settings.course_folder(roster.instructors[0])
    print(f"  exchange: {settings.exchange}; course folder: {course}")
    if settings.handin_service:
        print(
            f"  hand-ins: the hand-in service ({settings.handin_url}), kept in "
            f"{settings.handin_store}, which only {roster.instructors[0]} may enter"
        )
    else:
        print(f"  hand-ins: nbgrader's shared folder {settings.exchange / roster.course}/inbound")
    for note in notes:
        print(f"  note: {note}")
    sys.stdout.flush()
    env = {**os.environ, SETTINGS_VARIABLE: str(settings.file)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    hub = str(Path(sys.executable).parent / "jupyterhub")
    # JupyterHub itself stops its servers and the proxy on Ctrl-C (SIGINT) or SIGTERM: the
    # launcher's process becomes the hub's, so the signal reaches it directly.
    os.chdir(state)
    os.execve(hub, [hub, "-f", str(HUB_DIR / "jupyterhub_config.py")], env)


if __name__ == "__main__":
    main()
