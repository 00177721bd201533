"""A backup repository is data: memtui runs no program it names (DESIGN.md §4 invariant 12).

Each test plants one mechanism by which git runs a program named by a repository — hooks,
``core.fsmonitor``, filters bound by ``.gitattributes``, ``diff.external`` and textconv drivers,
``core.sshCommand``, ``core.gitProxy``, credential helpers, ``core.askPass``, pagers, signing
programs, ``remote.*.receivepack``, a remote's own hooks, the ``ext::`` transport, and config
files the repository includes — then runs ``backup``, ``backup --status``, ``backup --history``,
``verify`` and ``restore`` with real git. The planted program only writes a marker file: no
marker may appear, and each command still does its work (or, for a push to an address that
cannot answer, fails as a push, exit 4).
"""

from __future__ import annotations

import ast
import http.server
import os
import stat
import subprocess
import threading
from pathlib import Path

import pytest

from backup_helpers import git, isolate_git
from tests.conftest import run_cli

SUB = "memtui-backup"
MEMTUI = Path(__file__).resolve().parents[1] / "memtui"


@pytest.fixture(autouse=True)
def _git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.setenv("MEMTUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.delenv("GIT_SSH_COMMAND", raising=False)
    monkeypatch.delenv("GIT_ASKPASS", raising=False)
    monkeypatch.delenv("SSH_ASKPASS", raising=False)


class Plant:
    """A hostile backup repository: ``program(name)`` writes a script that leaves a marker."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.markers = tmp / "markers"
        self.markers.mkdir()
        self.bin = tmp / "hostile-bin"
        self.bin.mkdir()
        self.ws = tmp / "ws"
        (self.ws / "memory").mkdir(parents=True)
        (self.ws / "memory" / "AGENTS.md").write_text("# Memory\n\n- [Notes](notes.md) — notes\n", encoding="utf-8")
        (self.ws / "memory" / "notes.md").write_text("first line\n", encoding="utf-8")
        self.repo = tmp / "repo"

    def program(self, name: str, body: str = "") -> str:
        """A script that records it ran (``markers/<name>``), then does ``body`` (default: nothing)."""
        path = self.bin / name
        path.write_text(f'#!/bin/sh\necho "$0 $*" >> "{self.markers / name}"\n{body}\n', encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return str(path)

    def ran(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())

    def config(self, *pairs: tuple[str, str], where: Path | None = None) -> None:
        for key, value in pairs:
            git(where or self.repo, "config", "--add", key, value)

    def change_workspace(self, text: str) -> None:
        (self.ws / "memory" / "notes.md").write_text(text, encoding="utf-8")


@pytest.fixture
def plant(tmp_path: Path, capsys: pytest.CaptureFixture) -> Plant:
    """A workspace backed up once (so there is history), into a repository about to turn hostile."""
    made = Plant(tmp_path)
    code, _out, err = run_cli(capsys, "backup", "-w", str(made.ws), "--repo", str(made.repo))
    assert code == 0, err
    made.change_workspace("first line\nsecond line\n")
    return made


def run_all(plant: Plant, capsys: pytest.CaptureFixture, *, push_code: int | None = None) -> None:
    """--status, --history, verify and restore on the hostile repository as it was planted,
    then backup (with --push when ``push_code`` is given), then the four again: each must
    succeed (the push: exit ``push_code``)."""
    ws, repo = str(plant.ws), str(plant.repo)

    def reads() -> None:
        target = plant.tmp / f"restored-{len(list(plant.tmp.iterdir()))}"
        for name, argv in (("status", ["backup", "-w", ws, "--repo", repo, "--status"]),
                           ("history", ["backup", "-w", ws, "--repo", repo, "--history"]),
                           ("verify", ["verify", "-w", ws, "--repo", repo]),
                           ("restore", ["restore", "-w", ws, "--repo", repo, "--to", str(target)])):
            code, out, err = run_cli(capsys, *argv)
            assert code == 0, f"{name}: {out}{err}"
        assert (target / "memory" / "notes.md").is_file()

    reads()
    args = ["backup", "-w", ws, "--repo", repo] + (["--push"] if push_code is not None else [])
    code, _out, err = run_cli(capsys, *args)
    assert code == (push_code if push_code is not None else 0), err
    reads()
    history = run_cli(capsys, "backup", "-w", ws, "--repo", repo, "--history", "--json")[1]
    assert history.count('"commit"') >= 2  # the second backup was committed


HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout", "post-merge",
         "reference-transaction", "post-index-change", "pre-auto-gc", "post-rewrite", "pre-push", "fsmonitor-watchman",
         "push-to-checkout", "sendemail-validate", "p4-changelist", "post-update")


def test_no_hook_of_the_repository_runs(plant: Plant, capsys: pytest.CaptureFixture) -> None:
    hooks = plant.repo / ".git" / "hooks"
    for name in HOOKS:
        target = hooks / name
        target.write_text(Path(plant.program(name)).read_text(encoding="utf-8"), encoding="utf-8")
        target.chmod(0o755)
    run_all(plant, capsys)
    assert plant.ran() == []


def test_no_hook_runs_from_a_hooks_path_the_repository_sets(plant: Plant, capsys: pytest.CaptureFixture) -> None:
    folder = plant.tmp / "their-hooks"
    folder.mkdir()
    for name in ("pre-commit", "post-commit", "reference-transaction", "post-index-change"):
        (folder / name).write_text(Path(plant.program(name)).read_text(encoding="utf-8"), encoding="utf-8")
        (folder / name).chmod(0o755)
    plant.config(("core.hooksPath", str(folder)))
    run_all(plant, capsys)
    assert plant.ran() == []


def test_the_fsmonitor_the_repository_names_never_runs(plant: Plant, capsys: pytest.CaptureFixture) -> None:
    plant.config(("core.fsmonitor", plant.program("fsmonitor")))
    run_all(plant, capsys)
    assert plant.ran() == []


def test_no_filter_bound_by_gitattributes_runs(plant: Plant, capsys: pytest.CaptureFixture) -> None:
    """A clean, smudge or long-running process filter, bound to every path by the repository's
    own attributes (root ``.gitattributes`` and ``info/attributes``), even one marked required."""
    (plant.repo / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n", encoding="utf-8")
    # replaces memtui's own `-filter` line for the backup path: the reads come before a backup adds it again
    (plant.repo / ".git" / "info" / "attributes").write_text("* filter=weird=name\n", encoding="utf-8")
    plant.config(("filter.evil.clean", plant.program("clean", "cat")),
                  ("filter.evil.smudge", plant.program("smudge", "cat")),
                  ("filter.evil.required", "true"),
                  ("filter.weird=name.process", plant.program("process")),
                  ("merge.evil.driver", plant.program("merge-driver")))
    for path in (plant.repo / SUB).rglob("*"):  # stat-dirty files: status would re-read them through a filter
        if path.is_file():
            os.utime(path, (1, 1))
    run_all(plant, capsys)
    assert plant.ran() == []


def test_no_external_diff_or_textconv_runs(plant: Plant, capsys: pytest.CaptureFixture) -> None:
    (plant.repo / ".gitattributes").write_text("* diff=evil\n", encoding="utf-8")
    plant.config(("diff.external", plant.program("external-diff")),
                 ("diff.evil.textconv", plant.program("textconv", "cat \"$1\"")),
                 ("diff.evil.command", plant.program("diff-command")))
    run_all(plant, capsys)
    assert plant.ran() == []


def test_no_pager_or_editor_the_repository_names_runs(plant: Plant, capsys: pytest.CaptureFixture) -> None:
    plant.config(("core.pager", plant.program("pager", "cat")), ("pager.log", plant.program("pager-log", "cat")),
                 ("pager.status", plant.program("pager-status", "cat")), ("core.editor", plant.program("editor")),
                 ("sequence.editor", plant.program("sequence-editor")))
    run_all(plant, capsys)
    assert plant.ran() == []


def test_no_signing_program_runs(plant: Plant, capsys: pytest.CaptureFixture) -> None:
    plant.config(("commit.gpgSign", "true"), ("gpg.program", plant.program("gpg")),
                 ("gpg.openpgp.program", plant.program("gpg-openpgp")), ("log.showSignature", "true"),
                 ("gpg.format", "ssh"), ("gpg.ssh.program", plant.program("ssh-keygen")),
                 ("gpg.ssh.defaultKeyCommand", plant.program("default-key")))
    run_all(plant, capsys)
    assert plant.ran() == []


def test_a_config_file_the_repository_includes_runs_nothing(plant: Plant, capsys: pytest.CaptureFixture) -> None:
    """The programs may sit in a file the repository's config includes (here: one of its own
    working files, and a conditional include)."""
    included = plant.repo / "innocent.cfg"
    included.write_text(f"[core]\n\tfsmonitor = {plant.program('included-fsmonitor')}\n"
                        f"[filter \"x\"]\n\tclean = {plant.program('included-clean', 'cat')}\n", encoding="utf-8")
    (plant.repo / ".gitattributes").write_text("* filter=x\n", encoding="utf-8")
    plant.config(("include.path", str(included)), (f"includeIf.gitdir:{plant.repo}/.git.path", str(included)))
    for path in (plant.repo / SUB).rglob("*"):
        if path.is_file():
            os.utime(path, (1, 1))
    run_all(plant, capsys)
    assert plant.ran() == []


# -- pushing: programs the repository names for its remote ---------------------------------------

def test_the_ssh_command_the_repository_names_never_runs(plant: Plant, capsys: pytest.CaptureFixture) -> None:
    git(plant.repo, "remote", "add", "origin", "ssh://memtui-test@127.0.0.1:1/backup.git")
    plant.config(("core.sshCommand", plant.program("ssh-command")),
                 ("remote.origin.receivepack", plant.program("receive-pack-ssh")))
    run_all(plant, capsys, push_code=4)
    assert plant.ran() == []


def test_the_git_proxy_the_repository_names_never_runs(plant: Plant, capsys: pytest.CaptureFixture) -> None:
    git(plant.repo, "remote", "add", "origin", "git://127.0.0.1:1/backup.git")
    plant.config(("core.gitProxy", plant.program("git-proxy")))
    run_all(plant, capsys, push_code=4)
    assert plant.ran() == []


def test_the_ext_transport_never_runs_even_when_the_repository_allows_it(plant: Plant,
                                                                          capsys: pytest.CaptureFixture) -> None:
    git(plant.repo, "remote", "add", "origin", f"ext::{plant.program('ext-transport')} %G")
    plant.config(("protocol.ext.allow", "always"), ("protocol.allow", "always"))
    run_all(plant, capsys, push_code=4)
    assert plant.ran() == []


def test_a_local_remote_runs_neither_our_receive_pack_setting_nor_its_own_hooks(
        plant: Plant, capsys: pytest.CaptureFixture) -> None:
    bare = plant.tmp / "remote.git"
    git(plant.tmp, "init", "-q", "--bare", str(bare))
    for name in ("pre-receive", "update", "post-receive", "post-update", "reference-transaction", "proc-receive"):
        (bare / "hooks" / name).write_text(Path(plant.program(f"remote-{name}")).read_text(encoding="utf-8"),
                                           encoding="utf-8")
        (bare / "hooks" / name).chmod(0o755)
    git(plant.repo, "remote", "add", "origin", str(bare))
    plant.config(("remote.origin.receivepack", plant.program("receive-pack")),
                 ("core.alternateRefsCommand", plant.program("alternate-refs")))
    plant.config(("core.fsmonitor", plant.program("remote-fsmonitor")), where=bare)
    run_all(plant, capsys, push_code=0)
    assert plant.ran() == []
    assert git(bare, "rev-parse", "refs/heads/master").strip() == git(plant.repo, "rev-parse", "HEAD").strip()


class _AskForPassword(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="memtui-test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def asks_for_password():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AskForPassword)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/backup.git"
    server.shutdown()
    server.server_close()


def test_credential_helper_and_askpass_of_the_repository_never_run_but_yours_do(
        plant: Plant, capsys: pytest.CaptureFixture, asks_for_password: str, monkeypatch) -> None:
    """The remote asks for a password: the repository's helper and askpass stay silent; the
    helper in your own (global) git config is still asked, so pushing with it keeps working."""
    git(plant.repo, "remote", "add", "origin", asks_for_password)
    plant.config(("credential.helper", plant.program("credential-helper")),
                 (f"credential.{asks_for_password}.helper", plant.program("credential-helper-url")),
                 ("core.askPass", plant.program("askpass")))
    mine = plant.tmp / "mine"
    helper = mine / "my-helper"
    mine.mkdir()
    helper.write_text(f'#!/bin/sh\necho "$1" >> "{mine / "asked"}"\n', encoding="utf-8")
    helper.chmod(0o755)
    with open(os.environ["GIT_CONFIG_GLOBAL"], "a", encoding="utf-8") as handle:
        handle.write(f"[credential]\n\thelper = {helper}\n")
    run_all(plant, capsys, push_code=4)
    assert plant.ran() == []
    assert "get" in (mine / "asked").read_text(encoding="utf-8")


# -- structure: every git process goes through the one safe runner --------------------------------

def test_every_git_process_memtui_starts_gets_the_safe_settings(plant: Plant, capsys: pytest.CaptureFixture,
                                                                 monkeypatch) -> None:
    """Spy on every process started during the five commands: each git one carries the
    overrides (hooks off, no fsmonitor), whatever path started it."""
    git(plant.repo, "remote", "add", "origin", str(plant.tmp / "nowhere.git"))
    started: list[tuple[list, dict]] = []
    real = subprocess.Popen.__init__

    def spy(self, args, *rest, **kwargs):  # noqa: ANN001, ANN202
        argv = [os.fsdecode(a) for a in ([args] if isinstance(args, (str, bytes)) else args)]
        if argv and os.path.basename(argv[0]) == "git":
            started.append((argv, dict(kwargs.get("env") or os.environ)))
        return real(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", spy)
    run_all(plant, capsys, push_code=4)
    assert len(started) > 10
    for argv, env in started:
        pairs = {env.get(f"GIT_CONFIG_KEY_{i}"): env.get(f"GIT_CONFIG_VALUE_{i}")
                 for i in range(int(env.get("GIT_CONFIG_COUNT", "0")))}
        assert pairs.get("core.hooksPath") == os.devnull, argv
        assert pairs.get("core.fsmonitor") == "false", argv
        assert env.get("GIT_TERMINAL_PROMPT") == "0", argv


def test_no_module_starts_git_but_the_safe_runner() -> None:
    """Only ``memtui/core/backup/safegit.py`` starts git: no other module calls ``subprocess`` (but
    ``notes edit``, which starts your editor), ``os.exec*``/``os.spawn*``/``os.system``, or
    GitPython (``import git``: its command layer bypasses the runner, and its own config reader
    follows a repository's ``include.path``). The one other program memtui starts is a skill's
    declared test, on request, from ``core/skills/testrun.py`` (no shell, a timeout, DESIGN.md
    invariant 12)."""
    runner, editor, skill_tests = "core/backup/safegit.py", "commands/notes.py", "core/skills/testrun.py"
    offenders = []
    for path in MEMTUI.rglob("*.py"):
        rel = path.relative_to(MEMTUI).as_posix()
        if rel == runner:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if any(n == "git" or n.startswith("git.") for n in names):
                    offenders.append(f"{rel}:{node.lineno} imports GitPython")
                if "subprocess" in names and rel not in (editor, skill_tests):
                    offenders.append(f"{rel}:{node.lineno} imports subprocess")
            if not isinstance(node, ast.Call):
                continue
            called = ast.unparse(node.func)
            if called.startswith(("os.exec", "os.spawn", "os.system", "os.popen", "os.posix_spawn")) or \
                    called.split(".")[-1] in ("execute", "init", "Git") and "git" in called.lower():
                offenders.append(f"{rel}:{node.lineno} {called}")
    assert offenders == []


def test_a_config_that_includes_an_endless_file_is_a_sentence_not_a_hang(plant: Plant) -> None:
    """``include.path = /dev/zero``: git stops at once ("bad config line"); memtui says so (GitPython's
    own config reader, which memtui no longer uses, read it for ever)."""
    import sys

    plant.config(("include.path", "/dev/zero"))
    for argv, code in (((["backup", "--status", "--json"]), 4), (["backup"], 4), (["verify"], 4)):
        done = subprocess.run([sys.executable, "-m", "memtui", *argv, "-w", str(plant.ws), "--repo", str(plant.repo)],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == code, (argv, done.stdout, done.stderr)
        said = done.stdout + done.stderr
        assert "bad config line" in said and "Traceback" not in said, argv
    assert plant.ran() == []


def test_a_local_remote_that_checks_out_what_it_receives_runs_none_of_its_filters(
        plant: Plant, capsys: pytest.CaptureFixture) -> None:
    """A non-bare remote named by a relative path, with ``receive.denyCurrentBranch=updateInstead``:
    it checks out the pushed files, through the smudge filter its own config and attributes name."""
    remote = plant.tmp / "remote-wt"
    git(plant.tmp, "init", "-q", str(remote))
    (remote / ".git" / "info" / "attributes").write_text("* filter=evil\n", encoding="utf-8")
    plant.config(("receive.denyCurrentBranch", "updateInstead"),
                 ("filter.evil.smudge", plant.program("remote-smudge", "cat")),
                 ("filter.evil.process", plant.program("remote-process")), where=remote)
    git(plant.repo, "remote", "add", "origin", "../remote-wt")
    run_all(plant, capsys, push_code=0)
    assert plant.ran() == []
    assert (remote / SUB / "MANIFEST").is_file()  # checked out, byte for byte
