"""The git token in the keyring: no backend, a backend that never answers, and the CLI."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
from pathlib import Path

import keyring
import keyring.backend
import pytest
from keyring.backends import fail

from memtui.core import secrets

REPO = Path(__file__).resolve().parent.parent
TOKEN = "ghp_not_a_real_token_but_secret_0123456789"


class MemoryKeyring(keyring.backend.KeyringBackend):
    """An in-memory keyring for tests."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.items.get((service, username))

    def set_password(self, service, username, password):
        self.items[(service, username)] = password

    def delete_password(self, service, username):
        from keyring.errors import PasswordDeleteError

        if (service, username) not in self.items:
            raise PasswordDeleteError("not there")
        del self.items[(service, username)]


@pytest.fixture
def memory_keyring():
    before = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(before)


@pytest.fixture
def no_keyring():
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(before)


def test_set_get_delete_through_the_keyring(memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMTUI_GIT_TOKEN", raising=False)
    assert secrets.get("git-token").value is None
    secrets.set("git-token", TOKEN)
    assert memory_keyring.items == {("memtui", "git-token"): TOKEN}
    found = secrets.get("git-token")
    assert (found.value, found.source) == (TOKEN, "keyring")
    assert TOKEN not in repr(found)
    assert secrets.delete("git-token") is True
    assert secrets.delete("git-token") is False
    with pytest.raises(ValueError):
        secrets.set("git-token", "")


def test_no_keyring_backend_says_so_and_falls_back_to_the_environment(
        no_keyring: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMTUI_GIT_TOKEN", raising=False)
    with pytest.raises(secrets.KeyringUnavailable) as caught:
        secrets.set("git-token", TOKEN)
    assert "no secure keyring" in str(caught.value) and "MEMTUI_GIT_TOKEN" in str(caught.value)
    assert TOKEN not in str(caught.value)
    missing = secrets.get("git-token")
    assert missing.value is None and "no secure keyring" in missing.note
    monkeypatch.setenv("MEMTUI_GIT_TOKEN", TOKEN)
    found = secrets.get("git-token")
    assert (found.value, found.source) == (TOKEN, "environment")


def test_a_keyring_that_never_answers_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    class Blocking(MemoryKeyring):
        def get_password(self, service, username):
            time.sleep(30)

    before = keyring.get_keyring()
    keyring.set_keyring(Blocking())
    monkeypatch.setenv("MEMTUI_KEYRING_TIMEOUT", "0.3")
    monkeypatch.setenv("MEMTUI_GIT_TOKEN", TOKEN)
    try:
        started = time.monotonic()
        found = secrets.get("git-token")
        assert time.monotonic() - started < 2
        assert found.source == "environment" and "did not answer within 0.3 s" in found.note
    finally:
        keyring.set_keyring(before)


def _cli(shared: Path, mode: str, *args: str, stdin: str = "", env: dict | None = None) -> subprocess.CompletedProcess:
    script = shared / "bug-inputs" / "B09" / "run_without_keyring.sh"
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    full_env.pop("MEMTUI_GIT_TOKEN", None)
    return subprocess.run(["sh", str(script), mode, sys.executable, "-m", "memtui", *args], input=stdin,
                          capture_output=True, text=True, env=full_env, timeout=60)


def test_cli_without_keyring_gives_one_clear_message(shared: Path) -> None:
    done = _cli(shared, "none", "secret", "set", "git-token", stdin=TOKEN + "\n")
    assert done.returncode == 4
    assert "no secure keyring is available" in done.stderr and "MEMTUI_GIT_TOKEN" in done.stderr
    assert "Traceback" not in done.stderr and TOKEN not in done.stderr + done.stdout
    got = _cli(shared, "none", "secret", "get", "git-token")
    assert got.returncode == 1 and "not set" in got.stdout and "Traceback" not in got.stderr


def test_cli_with_a_blocking_keyring_times_out_with_a_message(shared: Path) -> None:
    started = time.monotonic()
    done = _cli(shared, "blocking", "secret", "set", "git-token", stdin=TOKEN + "\n",
                env={"BLOCKING_KEYRING_SECONDS": "40", "MEMTUI_KEYRING_TIMEOUT": "1"})
    assert time.monotonic() - started < 20
    assert done.returncode == 4 and "did not answer within 1 s" in done.stderr
    assert TOKEN not in done.stderr + done.stdout


def test_secret_get_never_prints_the_token(shared: Path, memory_keyring: MemoryKeyring,
                                         monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from memtui.cli import main

    monkeypatch.setenv("MEMTUI_GIT_TOKEN", TOKEN)
    assert main(["secret", "get", "git-token"]) == 0
    out = capsys.readouterr()
    assert "git-token is set (from the environment)" in out.out and TOKEN not in out.out + out.err
    assert main(["secret", "get", "git-token", "--json"]) == 0
    out = capsys.readouterr()
    assert '"set": true' in out.out and TOKEN not in out.out


# -- a keyring that is no safe: keyrings.alt's plain file and other low-priority backends --------

@pytest.fixture
def plaintext_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """keyrings.alt's default file backend (base64 in a plain file) as the keyring."""
    from keyrings.alt.file import PlaintextKeyring

    monkeypatch.delenv("MEMTUI_ALLOW_PLAINTEXT_KEYRING", raising=False)
    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring_pass.cfg")
    before = keyring.get_keyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(before)


def test_a_plaintext_keyring_is_refused_with_what_to_do_instead(plaintext_keyring, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMTUI_GIT_TOKEN", raising=False)
    with pytest.raises(secrets.KeyringUnavailable) as refused:
        secrets.set("git-token", TOKEN)
    message = str(refused.value)
    assert "plain file" in message and "export MEMTUI_GIT_TOKEN=" in message and "Secret Service" in message
    assert "keyrings.alt package" not in message and TOKEN not in message
    path = Path(plaintext_keyring.file_path)
    assert not path.exists() or TOKEN.encode() not in path.read_bytes()
    # a token an earlier version stored there is not used either: the environment is
    plaintext_keyring.set_password(secrets.SERVICE, "git-token", "stored-" + TOKEN)
    monkeypatch.setenv("MEMTUI_GIT_TOKEN", TOKEN)
    found = secrets.get("git-token")
    assert (found.value, found.source) == (TOKEN, "environment") and "plain file" in (found.note or "")
    # and it can be removed from that file
    assert secrets.delete("git-token") is True
    assert plaintext_keyring.get_password(secrets.SERVICE, "git-token") is None


def test_any_backend_keyring_rates_below_recommended_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    class Weak(MemoryKeyring):
        priority = 0.5  # keyring: "a priority of one or greater is recommended"

    before = keyring.get_keyring()
    keyring.set_keyring(Weak())
    try:
        with pytest.raises(secrets.KeyringUnavailable, match="not a secure store"):
            secrets.set("graph-token", TOKEN)
    finally:
        keyring.set_keyring(before)


def test_the_explicit_opt_in_allows_a_plaintext_keyring_and_still_warns(plaintext_keyring,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_ALLOW_PLAINTEXT_KEYRING", "1")
    warning = secrets.set("graph-token", TOKEN)
    assert warning and "plain file" in warning and plaintext_keyring.file_path in warning  # the file is named
    found = secrets.get("graph-token")
    assert (found.value, found.source) == (TOKEN, "keyring") and "plain file" in (found.note or "")


def test_no_advice_recommends_a_plaintext_keyring(shared: Path) -> None:
    done = _cli(shared, "none", "secret", "set", "git-token", stdin=TOKEN + "\n")
    assert done.returncode == 4 and "keyrings.alt" not in done.stderr
    assert "Secret Service" in done.stderr


def test_the_cli_refuses_keyrings_alt_default_backend(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring",
           "XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path / "home")}
    env.pop("MEMTUI_ALLOW_PLAINTEXT_KEYRING", None)
    done = subprocess.run([sys.executable, "-m", "memtui", "secret", "set", "graph-token"], input=TOKEN + "\n",
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 4 and "plain file" in done.stderr and "MEMTUI_GRAPH_TOKEN" in done.stderr
    assert "Traceback" not in done.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes() and base64.b64encode(TOKEN.encode()) not in path.read_bytes()
    allowed = subprocess.run([sys.executable, "-m", "memtui", "secret", "set", "graph-token"], input=TOKEN + "\n",
                             capture_output=True, text=True, env={**env, "MEMTUI_ALLOW_PLAINTEXT_KEYRING": "1"},
                             timeout=60)
    assert allowed.returncode == 0 and "plain file" in allowed.stderr
