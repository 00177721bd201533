"""Secrets (the git token, the remote graph's token) in the OS keyring, never in a file memtui writes (invariant 8; B09).

Secrets live in the OS keyring through the ``keyring`` library under the service name
``memtui``. Two ordinary situations are handled (LIBRARY-NOTES, keyring 25.7.0; bug input B09):

- **no keyring backend** (a headless Linux box with no Secret Service): every call raises
  ``NoKeyringError``; memtui says so in one sentence and names the fallback, the environment
  variable (``MEMTUI_GIT_TOKEN`` for ``git-token``), which :func:`get` reads when the keyring
  has nothing or cannot answer;
- **a keyring that never answers** (a locked collection waiting on a prompt nobody sees):
  every call runs in a daemon thread and is given up after :data:`TIMEOUT` seconds
  (``MEMTUI_KEYRING_TIMEOUT`` overrides it) with :class:`KeyringTimeout`, so neither the CLI
  nor the TUI freezes.

memtui never writes a secret to a plain file, the store, the backup tree or a log; secret
values never appear in messages.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, Callable

from memtui.core.errors import ExternalError

SERVICE = "memtui"
#: Secret names memtui knows, each with its environment fallback.
NAMES = {"git-token": "MEMTUI_GIT_TOKEN",
         # the bearer token of the remote graph (issue 16; seed 002's /v1/mcp)
         "graph-token": "MEMTUI_GRAPH_TOKEN"}
#: What a copy memtui makes holds in place of a secret it leaves out (the backup's ``config.json``:
#: :mod:`memtui.core.backup.redact`); a reader meeting it knows the secret is missing, not wrong.
LEFT_OUT = ("(left out by memtui backup: a secret; put the token back with `memtui secret set graph-token`, "
            "or let the proxy write this block again)")
#: Seconds a keyring call may take before memtui gives up on it.
TIMEOUT = 5.0


class KeyringUnavailable(ExternalError):
    """No keyring backend can be used (``NoKeyringError``) or the backend failed."""


class KeyringTimeout(ExternalError):
    """The keyring did not answer within the timeout (for example a locked collection)."""


def timeout() -> float:
    """The keyring timeout in seconds: ``$MEMTUI_KEYRING_TIMEOUT`` or :data:`TIMEOUT`."""
    try:
        return max(0.1, float(os.environ.get("MEMTUI_KEYRING_TIMEOUT", TIMEOUT)))
    except ValueError:
        return TIMEOUT


def _env_name(name: str) -> str:
    if name not in NAMES:
        raise KeyError(f"unknown secret {name!r}; memtui knows: {', '.join(NAMES)}")
    return NAMES[name]


def _no_keyring(name: str, exc: BaseException | None = None) -> KeyringUnavailable:
    detail = f" ({type(exc).__name__}: {exc})" if exc else ""
    return KeyringUnavailable(
        f"no secure keyring is available on this machine{detail}. memtui does not store secrets "
        f"in plain files. For this run, set the token in the environment: export {_env_name(name)}=…; "
        "for good, install and unlock a keyring backend (the Secret Service: gnome-keyring or "
        f"KeePassXC; or the keyrings.alt package) and run `memtui secret set {name}` again.")


def _call(name: str, fn: Callable[[], Any]) -> Any:
    """Run the keyring call ``fn`` in a daemon thread; give up after :func:`timeout` seconds."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, name="memtui-keyring", daemon=True)
    thread.start()
    thread.join(timeout())
    if thread.is_alive():
        raise KeyringTimeout(
            f"the keyring did not answer within {timeout():g} s (a locked keyring may be waiting "
            f"for an unlock prompt that is not shown). Unlock it and try again, or set "
            f"{_env_name(name)} in the environment for this run.")
    if "error" in box:
        import keyring.errors

        exc = box["error"]
        if isinstance(exc, keyring.errors.NoKeyringError):
            raise _no_keyring(name, None) from None
        if isinstance(exc, keyring.errors.KeyringError):
            raise KeyringUnavailable(f"the keyring failed: {type(exc).__name__}: {exc}. Set "
                                     f"{_env_name(name)} in the environment for this run.") from None
        raise exc
    return box.get("value")


@dataclass(frozen=True, slots=True)
class Secret:
    """A secret looked up by :func:`get`.

    Attributes:
        value: the secret, or ``None`` when it is set nowhere. Never print it.
        source: ``"keyring"``, ``"environment"`` or ``None``.
        note: why the keyring was not used (no backend, timeout), or ``None``.
    """

    value: str | None
    source: str | None
    note: str | None = None

    def __repr__(self) -> str:  # never show the value
        return f"Secret(set={self.value is not None}, source={self.source!r}, note={self.note!r})"


def get(name: str) -> Secret:
    """Look ``name`` up: the keyring first, then its environment variable.

    Returns:
        :class:`Secret`; never raises for a missing or unusable keyring (the reason is in
        ``note``, and the environment variable is used).

    Raises:
        KeyError: ``name`` is not a secret memtui knows.
    """
    env = _env_name(name)
    note = None
    try:
        import keyring

        value = _call(name, lambda: keyring.get_password(SERVICE, name))
        if value:
            return Secret(value, "keyring")
    except (KeyringUnavailable, KeyringTimeout) as exc:
        note = str(exc)
    if os.environ.get(env):
        return Secret(os.environ[env], "environment", note)
    return Secret(None, None, note)


def set(name: str, value: str) -> None:  # noqa: A001 - the verb of `memtui secret set`
    """Store ``value`` under ``name`` in the keyring.

    Raises:
        KeyringUnavailable: no keyring backend (the message gives the fallback).
        KeyringTimeout: the keyring did not answer.
        ValueError: ``value`` is empty.
    """
    _env_name(name)
    if not value:
        raise ValueError("the secret is empty; nothing was stored.")
    import keyring

    _call(name, lambda: keyring.set_password(SERVICE, name, value))


def delete(name: str) -> bool:
    """Remove ``name`` from the keyring.

    Returns:
        ``True`` when it was there, ``False`` when it was not.

    Raises:
        KeyringUnavailable, KeyringTimeout: as for :func:`set`.
    """
    _env_name(name)
    import keyring
    import keyring.errors

    def remove() -> bool:
        try:
            keyring.delete_password(SERVICE, name)
        except keyring.errors.PasswordDeleteError:
            return False
        return True

    return bool(_call(name, remove))
