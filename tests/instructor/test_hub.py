"""What ``make hub`` prepares, without a hub or a browser (``instructor/hub.py``).

The hub itself, its users and formgrader in a browser are tested in
``tests/course/test_hub_term.py``; these check the files and permissions it leaves, fast.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from traitlets.config import Config

from instructor.hub import (
    INSTRUCTOR_CSP,
    HubError,
    HubSettings,
    Roster,
    configure,
    environment_script,
    prepare,
    remove_environment_scripts,
)
from support.hub import remove_hub_users

# The tests that make the system users of ROSTER remove them first and at the end: two at
# once on two test workers would delete each other's users. One worker runs them in turn.
pytestmark = pytest.mark.xdist_group("hub-system-users")

ROSTER = """course = "self-attention"
instructors = ["unitteach"]
students = ["unitstu"]
"""


def roster(tmp_path: Path, text: str = ROSTER) -> Roster:
    path = tmp_path / "roster.toml"
    path.write_text(text)
    return Roster.load(path)


@pytest.fixture
def root_hub(tmp_path) -> Iterator[tuple[Roster, Path]]:
    """As root: :data:`ROSTER` and a state folder outside pytest's (the users must reach
    it); the roster's system users removed before and after, and the hub's
    ``/etc/profile.d`` script after."""
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("useradd", "runuser")):
        pytest.skip("not root (or no useradd, runuser): real users are made as root only")
    r = roster(tmp_path)
    remove_hub_users(r.users)
    state = Path(tempfile.mkdtemp(prefix="course-hub-unit-"))
    try:
        yield r, state
    finally:
        remove_hub_users(r.users)
        remove_environment_scripts(state=state)
        shutil.rmtree(state, ignore_errors=True)


@pytest.mark.parametrize("students", ['["Alice"]', '["a+b"]', '["unitteach"]', '["x_y"]'], ids=str)
def test_roster_refuses_names_nbgrader_or_useradd_cannot_take(tmp_path, students) -> None:
    text = f'course = "c"\ninstructors = ["unitteach"]\nstudents = {students}\n'
    with pytest.raises(HubError, match="names must be unique"):
        roster(tmp_path, text)


def test_not_root_every_account_runs_as_this_user_and_says_so(tmp_path) -> None:
    settings = HubSettings(roster(tmp_path), tmp_path / "state", "pw-123456789", real_users=False)
    notes = prepare(settings)
    assert any("not root" in note for note in notes), notes
    c = Config()
    configure(c, settings)
    assert c.JupyterHub.spawner_class == "simple"
    config = (settings.course_folder("unitteach") / "nbgrader_config.py").read_text()
    assert "OwnerCheckedCollect" not in config  # one uid: an owner check would refuse all


def test_prepare_as_root_makes_private_homes_and_the_course_exchange_the_instructors(
    tmp_path, root_hub
) -> None:
    r, state = root_hub
    settings = HubSettings(
        r, state, "pw-123456789", real_users=True, profile_dir=tmp_path / "profile.d"
    )
    prepare(settings)
    for name in r.users:
        home = settings.home(name)
        assert pwd.getpwnam(name).pw_dir == str(home)
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        assert home.owner() == name
    exchange = settings.exchange
    assert stat.S_IMODE(exchange.stat().st_mode) == 0o1777
    assert (exchange / r.course).owner() == "unitteach"
    assert settings.course_folder("unitteach").owner() == "unitteach"
    course_config = (settings.course_folder("unitteach") / "nbgrader_config.py").read_text()
    # Hand-ins go to the hand-in service, whose store and the exchange's inbound/ are the
    # instructor's alone; collect reads the store.
    assert "instructor.exchange.HubCollect" in course_config
    assert f"c.HubCollect.store = {str(settings.handin_store)!r}" in course_config
    for folder in (settings.handin_store, exchange / r.course / "inbound"):
        assert folder.owner() == "unitteach" and stat.S_IMODE(folder.stat().st_mode) == 0o700
    teacher = json.loads(
        (settings.config_folder("instructor") / "jupyter_server_config.json").read_text()
    )
    student = json.loads(
        (settings.config_folder("student") / "jupyter_server_config.json").read_text()
    )
    headers = teacher["ServerApp"]["tornado_settings"]["headers"]
    assert headers["Content-Security-Policy"] == INSTRUCTOR_CSP
    assert "tornado_settings" not in student["ServerApp"]  # JupyterHub's 'none' stays
    extensions = student["ServerApp"]["jpserver_extensions"]
    assert extensions["nbgrader.server_extensions.formgrader"] is False
    # The grading page by question: in the instructor's server, on the course folder only.
    assert "instructor.grading_page" not in extensions
    assert teacher["ServerApp"]["jpserver_extensions"]["instructor.grading_page"] is True
    assert teacher["RubricGradingPage"]["course_root"] == str(settings.course_folder("unitteach"))
    assert (
        "ExchangeSubmit.strict = True"
        in (settings.config_folder("student") / "nbgrader_config.py").read_text()
    )
    c = Config()
    configure(c, settings)
    assert c.JupyterHub.spawner_class == "localprocess"
    assert "read:users:groups!user" in c.Spawner.server_token_scopes
    assert c.JupyterHub.load_groups["nbgrader-self-attention"]["users"] == ["unitstu"]
    assert c.JupyterHub.load_groups["formgrade-self-attention"]["users"] == ["unitteach"]
    # Graders open the course folder's server (its grading page), and nothing else.
    roles = {role["name"]: role for role in c.JupyterHub.load_roles}
    assert roles["course-graders"]["groups"] == ["formgrade-self-attention"]
    assert roles["course-graders"]["scopes"] == ["access:servers!user=unitteach"]
    assert roles["course-handin"]["scopes"] == ["access:services!service=handin"]
    (service,) = c.JupyterHub.services
    assert service["name"] == "handin" and service["user"] == "unitteach"
    assert service["url"] == f"http://127.0.0.1:{settings.handin_port}"
    assert "access:services!service=handin" in c.Spawner.server_token_scopes
    student_config = (settings.config_folder("student") / "nbgrader_config.py").read_text()
    assert 'c.ExchangeFactory.submit = "instructor.exchange.HubSubmit"' in student_config
    assert repr(settings.handin_url) in student_config
    # A restart keeps the instructor's own edits of the course configuration.
    edited = settings.course_folder("unitteach") / "nbgrader_config.py"
    edited.write_text(edited.read_text() + "\n# mine\n")
    prepare(settings)
    assert edited.read_text().endswith("# mine\n")


def test_collect_takes_only_submissions_their_student_owns(tmp_path, root_hub) -> None:
    """As the hub's instructor, with nbgrader's shared-folder exchange (``--exchange
    folder``): a newer folder in a student's name owned by someone else, and a name outside
    the course's id allow-list, are left out; the student's own is collected."""
    r, state = root_hub
    settings = HubSettings(
        r,
        state,
        "pw-123456789",
        real_users=True,
        profile_dir=tmp_path / "profile.d",
        handin_service=False,
    )
    prepare(settings)
    assert stat.S_IMODE(settings.exchange.stat().st_mode) == 0o1777
    inbound = settings.exchange / r.course / "inbound"
    inbound.mkdir()
    shutil.chown(inbound, "unitteach", "unitteach")
    inbound.chmod(0o2733)
    hand_ins = {
        "unitstu+01_vector_sets+2026-01-01 00:00:00.000000 UTC+own": "unitstu",
        "unitstu+01_vector_sets+2026-01-02 00:00:00.000000 UTC+forged": "unitteach",
        "-dash+01_vector_sets+2026-01-03 00:00:00.000000 UTC+dash": "unitstu",
    }
    for name, owner in hand_ins.items():
        folder = inbound / name
        folder.mkdir()
        (folder / "01_vector_sets.ipynb").write_text(json.dumps({"marker": name}))
        (folder / "timestamp.txt").write_text(name.split("+")[2])
        for path in (folder, *folder.iterdir()):
            shutil.chown(path, owner, owner)
    course = settings.course_folder("unitteach")
    home = settings.home("unitteach")
    env = [f"HOME={home}", f"PATH={Path(sys.executable).parent}:/usr/bin:/bin",
           f"JUPYTER_CONFIG_PATH={settings.config_folder('instructor')}"]  # fmt: skip
    result = subprocess.run(
        ["runuser", "-u", "unitteach", "--", "env", "-i", *env,
         "nbgrader", "collect", "01_vector_sets"],
        cwd=course, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    collected = course / "submitted" / "unitstu" / "01_vector_sets" / "01_vector_sets.ipynb"
    assert "+own" in collected.read_text(), result.stderr
    assert "claims to be submitted by unitstu but is owned by unitteach" in result.stderr
    assert "refused" in result.stderr
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["unitstu"]


def test_every_account_s_lab_asks_no_news_and_students_validate_the_course_s_way(tmp_path) -> None:
    settings = HubSettings(roster(tmp_path), tmp_path / "state", "pw-123456789", real_users=False)
    prepare(settings)
    for role in ("student", "instructor"):
        folder = settings.config_folder(role)
        overrides = json.loads(
            (folder / "labconfig" / "default_setting_overrides.json").read_text()
        )
        assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    student = (settings.config_folder("student") / "nbgrader_config.py").read_text()
    assert "use_course_validation()" in student
    # The instructor's loads the course's configuration, which calls it.
    course_config = Path(__file__).parents[2] / "autograder" / "nbgrader_config.py"
    assert "use_course_validation()" in course_config.read_text()


def test_the_launcher_documents_every_option_and_the_ports_it_takes(capsys) -> None:
    from instructor import hub

    with pytest.raises(SystemExit):
        hub.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option in ("--roster", "--state", "--port", "--password"):
        assert f"{option} " in text
    assert "PORT+1 (the proxy's API) and PORT+81 (the hub itself)" in text


def test_a_port_the_hub_needs_is_checked_before_it_starts(monkeypatch) -> None:
    import socket

    from instructor import hub

    monkeypatch.setattr(hub, "skip_reason", lambda: None)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        taken = holder.getsockname()[1]
        port = taken - hub.PROXY_API_OFFSET
        assert hub.busy_ports(port) == [f"{taken} (the proxy's API)"]
        with pytest.raises(SystemExit, match=f"in use: {taken} \\(the proxy's API\\)"):
            hub.main(["--port", str(port)])


VENV_BIN = Path(sys.executable).parent


def login_environment(script: Path, home: Path, path: str = "/usr/bin:/bin") -> tuple[str, str]:
    """PATH and JUPYTER_CONFIG_PATH after ``sh`` sources ``script`` twice, as
    ``/etc/profile`` would for a user whose home is ``home``."""
    shown = subprocess.run(
        ["env", "-i", f"HOME={home}", f"PATH={path}", "sh", "-c",
         '. "$0"; . "$0"; printf "%s\\n%s" "$PATH" "${JUPYTER_CONFIG_PATH-unset}"',
         str(script)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found, config = shown.stdout.split("\n")
    return found, config


def test_the_environment_script_gives_the_hub_s_users_the_course_and_no_one_else(
    tmp_path,
) -> None:
    """``sh`` (dash, what /etc/profile is written for) sources the script: the course's
    ``bin`` first on PATH, once, and the role's configuration, only for homes of the hub;
    a state folder with a space and a quote in its name changes nothing."""
    text = 'course = "c"\ninstructors = ["unitteach"]\nstudents = ["unitstu"]\n'
    state = tmp_path / "it's a state"
    settings = HubSettings(roster(tmp_path, text), state, "pw-123456789", real_users=True)
    script = tmp_path / "course-hub.sh"
    script.write_text(environment_script(settings))
    path, config = login_environment(script, settings.home("unitteach"))
    assert path == f"{VENV_BIN}:/usr/bin:/bin"
    assert config == str(settings.config_folder("instructor"))
    path, config = login_environment(script, settings.home("unitstu"))
    assert path == f"{VENV_BIN}:/usr/bin:/bin"
    assert config == str(settings.config_folder("student"))
    for other in (Path("/root"), state / "homes", tmp_path / "elsewhere" / "homes" / "unitstu"):
        assert login_environment(script, other) == ("/usr/bin:/bin", "unset"), other
    # Already first (the terminal of a shell started from the lab): not added twice.
    path, _ = login_environment(script, settings.home("unitstu"), f"{VENV_BIN}:/bin")
    assert path == f"{VENV_BIN}:/bin"


def test_only_the_scripts_of_hubs_are_removed_and_a_stale_one_by_its_missing_state(
    tmp_path,
) -> None:
    profile = tmp_path / "profile.d"
    profile.mkdir()
    live, gone = tmp_path / "live-state", tmp_path / "gone-state"
    live.mkdir()
    for state in (live, gone):
        settings = HubSettings(roster(tmp_path), state, "pw", profile_dir=profile)
        settings.environment_script.write_text(environment_script(settings))
    foreign = profile / "course-hub-notours.sh"
    foreign.write_text("# someone else's, no mark\n")
    other = profile / "other.sh"
    other.write_text("# course-hub-state: /nowhere\n")  # marked, but not a hub's name
    removed = remove_environment_scripts(profile)
    assert [p.name for p in removed] == [
        HubSettings(roster(tmp_path), gone, "pw", profile_dir=profile).environment_script.name
    ]
    assert foreign.exists() and other.exists()
    (kept,) = remove_environment_scripts(profile, state=live)
    assert not kept.exists() and foreign.exists()


def test_not_root_nothing_goes_to_profile_d_and_the_launcher_says_what_to_type(tmp_path) -> None:
    profile = tmp_path / "profile.d"
    settings = HubSettings(
        roster(tmp_path), tmp_path / "state", "pw", real_users=False, profile_dir=profile
    )
    notes = prepare(settings)
    assert not profile.exists()
    assert any(str(VENV_BIN / "activate") in note for note in notes), notes
    assert HubSettings.read(settings.file).profile_dir == profile


def test_as_root_the_hub_s_users_login_shells_run_the_course_s_python(root_hub) -> None:
    """``runuser -l`` (a login shell, as JupyterLab's terminal and ssh start one: Debian's
    /etc/profile resets PATH) finds the course's ``python`` and ``nbgrader`` and the role's
    configuration; root's own login shell is left as it was; removing the script undoes it."""
    r, state = root_hub
    settings = HubSettings(r, state, "pw-123456789", real_users=True)
    notes = prepare(settings)
    script = settings.environment_script
    assert script.parent == Path("/etc/profile.d") and script.exists()
    assert stat.S_IMODE(script.stat().st_mode) == 0o644 and script.owner() == "root"
    assert any(str(script) in note for note in notes), notes

    def login(user: str, command: str) -> str:
        return subprocess.run(
            ["runuser", "-l", user, "-c", command], capture_output=True, text=True
        ).stdout.strip()

    shown = login("unitteach", 'command -v python nbgrader; echo "$JUPYTER_CONFIG_PATH"')
    assert shown.splitlines() == [
        str(VENV_BIN / "python"),
        str(VENV_BIN / "nbgrader"),
        str(settings.config_folder("instructor")),
    ]
    assert login("unitteach", "python -c 'import instructor.classroom; print(1)'") == "1"
    assert login("unitstu", 'echo "$JUPYTER_CONFIG_PATH"') == str(settings.config_folder("student"))
    assert str(VENV_BIN) not in login("root", 'echo "$PATH"')
    prepare(settings)  # a restart writes the same script again
    assert script.read_text() == environment_script(settings)
    assert remove_environment_scripts(state=state) == [script]
    assert str(VENV_BIN) not in login("unitteach", 'echo "$PATH"')


def test_the_exchange_is_closed_to_students_with_the_hand_in_service_and_open_without(
    tmp_path,
) -> None:
    """With the hand-in service (the default) no student may write in the course's
    inbound/ or the store; a restart with ``--exchange folder`` gives nbgrader's shared
    inbound its own mode back. The root stays rwxrwxrwt: nbgrader's commands need it."""
    settings = HubSettings(roster(tmp_path), tmp_path / "state", "pw", real_users=False)
    prepare(settings)
    inbound = settings.exchange / "self-attention" / "inbound"
    assert stat.S_IMODE(settings.exchange.stat().st_mode) == 0o1777
    assert stat.S_IMODE(inbound.stat().st_mode) == 0o700
    assert stat.S_IMODE(settings.handin_store.stat().st_mode) == 0o700
    c = Config()
    configure(c, settings)
    (service,) = c.JupyterHub.services
    assert "user" not in service  # not root: the service runs as this user, as every server
    assert service["command"][1:3] == ["-m", "instructor.handin"]
    folder = HubSettings(
        roster(tmp_path), tmp_path / "state", "pw", real_users=False, handin_service=False
    )
    prepare(folder)
    assert stat.S_IMODE(settings.exchange.stat().st_mode) == 0o1777
    assert stat.S_IMODE(inbound.stat().st_mode) == 0o733
    c = Config()
    configure(c, folder)
    assert "services" not in c.JupyterHub
    assert not any("handin" in scope for scope in c.Spawner.server_token_scopes)
    student = (folder.config_folder("student") / "nbgrader_config.py").read_text()
    assert "HubSubmit" not in student


def test_a_course_config_written_before_the_hand_in_service_is_named(tmp_path) -> None:
    """The course folder's configuration is written once: one from a hub without the
    hand-in service keeps collecting the shared inbound, and the launcher says what to add."""
    state = tmp_path / "state"
    prepare(HubSettings(roster(tmp_path), state, "pw", real_users=False, handin_service=False))
    settings = HubSettings(roster(tmp_path), state, "pw", real_users=False)
    (note,) = [n for n in prepare(settings) if "written before the hand-in service" in n]
    assert 'c.ExchangeFactory.collect = "instructor.exchange.HubCollect"' in note
    assert repr(str(settings.handin_store)) in note
