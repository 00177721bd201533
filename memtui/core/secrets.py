"""Secrets (the git token, the remote graph's token) in the OS keyring, never in a file memtui writes (invariant 8).

Secrets live in the OS keyring through the ``keyring`` library under the service name
``memtui``. Two ordinary situations are handled (LIBRARY-NOTES, keyring 25.7.0):

- **no keyring backend** (a headless Linux box with no Secret Service): every call raises
  ``NoKeyringError``; memtui says so in one sentence and names the fallback, the environment
  variable (``MEMTUI_GIT_TOKEN`` for ``git-token``), which :func:`get` reads when the keyring
  has nothing or cannot answer;
- **a keyring that never answers** (a locked collection waiting on a prompt nobody sees):
  every call runs in a daemon thread and is given up after :data:`TIMEOUT` seconds
  (``MEMTUI_KEYRING_TIMEOUT`` overrides it) with :class:`KeyringTimeout`, so neither the CLI
  nor the TUI freezes;
- **a keyring that is no safe store** (:func:`weakness`): keyrings.alt's default file backend
  keeps secrets base64-encoded in a plain file, and keyring itself rates such backends below 1
  ("usable, not recommended"). memtui refuses to store or read a secret there, with the same
  fallbacks as for no keyring (the environment variable for one run, a Secret Service for
  good); deleting one from there is allowed. ``MEMTUI_ALLOW_PLAINTEXT_KEYRING=1`` (tests, or a
  user who accepts the risk) lets it be used, and every call then says so (a note, a warning).

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
         # the bearer token of the remote graph (seed 002's /v1/mcp)
         "graph-token": "MEMTUI_GRAPH_TOKEN"}
#: What a copy memtui makes holds in place of a secret it leaves out (the backup's ``config.json``:
#: :mod:`memtui.core.backup.redact`); a reader meeting it knows the secret is missing, not wrong.
LEFT_OUT = ("(left out by memtui backup: a secret; put the token back with `memtui secret set graph-token`, "
            "or let the proxy write this block again)")
#: Seconds a keyring call may take before memtui gives up on it.
TIMEOUT = 5.0
#: The environment variable that lets memtui use a keyring backend that is no safe store.
ALLOW_PLAINTEXT = "MEMTUI_ALLOW_PLAINTEXT_KEYRING"
#: Backends known to keep secrets readable in a file (whatever priority they claim).
PLAINTEXT_BACKENDS = frozenset({"keyrings.alt.file.PlaintextKeyring", "keyrings.alt.file.PlainTextKeyring"})
#: Backends that mean "no keyring" (each call fails, or stores nothing): the no-keyring message.
NO_BACKENDS = frozenset({"keyring.backends.fail.Keyring", "keyring.backends.null.Keyring"})


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


#: What to do for good where the keyring is missing or no safe store (one sentence, both messages).
_FOR_GOOD = ("for good, install and unlock a Secret Service (gnome-keyring or KeePassXC; on macOS and "
             "Windows the system keychain is used)")


def _no_keyring(name: str, exc: BaseException | None = None) -> KeyringUnavailable:
    detail = f" ({type(exc).__name__}: {exc})" if exc else ""
    return KeyringUnavailable(
        f"no secure keyring is available on this machine{detail}. memtui does not store secrets "
        f"in plain files. For this run, set the token in the environment: export {_env_name(name)}=…; "
        f"{_FOR_GOOD} and run `memtui secret set {name}` again.")


def _label(backend: Any) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def weakness(backend: Any) -> str | None:
    """Why ``backend`` is no safe store for a secret, or ``None`` when it is one.

    A backend is no safe store when it is one of :data:`PLAINTEXT_BACKENDS`, or when keyring's
    own rating of it, ``priority``, is below 1 ("a priority of one or greater is recommended",
    keyring's ``KeyringBackend.priority``; keyrings.alt's file backends rate 0.5 and 0.6); a
    chain of backends is as weak as its weakest. The backends of :data:`NO_BACKENDS` are no
    keyring at all and are left to the no-keyring message. Reading ``priority`` may ask the
    system (D-Bus): call this where a keyring call may run (:func:`_call`).
    """
    chained = getattr(backend, "backends", None)
    if isinstance(chained, (list, tuple)) and chained:
        return next((w for w in map(weakness, chained) if w), None)
    label = _label(backend)
    if label in NO_BACKENDS:
        return None
    where = getattr(backend, "file_path", None)
    where = f" ({where})" if isinstance(where, str) else ""
    if label in PLAINTEXT_BACKENDS:
        return f"{label} keeps secrets in a plain file{where} (base64 is an encoding, not encryption)"
    try:
        rating = float(type(backend).priority)
    except Exception:  # noqa: BLE001 - a backend unfit for this system says so by raising
        rating = 0.0
    if rating < 1:
        return f"{label}{where} is rated {rating:g} by keyring, which recommends 1 or more: it is not a secure store"
    return None


def _refused(name: str, why: str) -> KeyringUnavailable:
    return KeyringUnavailable(
        f"the keyring here is no safe place for a secret: {why}, readable by anyone who can read your "
        f"files. memtui does not store or read secrets there. For this run, set the token in the "
        f"environment: export {_env_name(name)}=…; {_FOR_GOOD} and run `memtui secret set {name}` again.")


def _allowed_weak(why: str) -> str:
    return f"the keyring used is no safe store ({why}); it is used because {ALLOW_PLAINTEXT} is set"


def _checked(name: str, deleting: bool = False) -> str | None:
    """In the keyring thread: raise :func:`_refused` for a backend that is no safe store
    (unless ``deleting``, or :data:`ALLOW_PLAINTEXT` is set: then the warning is returned)."""
    import keyring

    why = weakness(keyring.get_keyring())
    if why is None:
        return None
    if deleting or os.environ.get(ALLOW_PLAINTEXT) == "1":
        return _allowed_weak(why)
    raise _refused(name, why)


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
        if isinstance(exc, KeyringUnavailable):  # refused (:func:`_checked`): its sentence as it is
            raise exc
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

        def read() -> tuple[str | None, str | None]:
            warning = _checked(name)
            return keyring.get_password(SERVICE, name), warning

        value, note = _call(name, read)
        if value:
            return Secret(value, "keyring", note)
    except (KeyringUnavailable, KeyringTimeout) as exc:
        note = str(exc)
    if os.environ.get(env):
        return Secret(os.environ[env], "environment", note)
    return Secret(None, None, note)


def set(name: str, value: str) -> str | None:  # noqa: A001 - the verb of `memtui secret set`
    """Store ``value`` under ``name`` in the keyring.

    Returns:
        ``None``, or a warning to show when the keyring is no safe store and
        ``MEMTUI_ALLOW_PLAINTEXT_KEYRING=1`` let it be used (:func:`weakness`).

    Raises:
        KeyringUnavailable: no keyring backend, or one that is no safe store (the message gives
            the fallback; nothing was stored).
        KeyringTimeout: the keyring did not answer.
        ValueError: ``value`` is empty.
    """
    _env_name(name)
    if not value:
        raise ValueError("the secret is empty; nothing was stored.")
    import keyring

    def store() -> str | None:
        warning = _checked(name)
        keyring.set_password(SERVICE, name, value)
        return warning

    return _call(name, store)


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
        _checked(name, deleting=True)  # removing a secret from a plain file is always allowed
        try:
            keyring.delete_password(SERVICE, name)
        except keyring.errors.PasswordDeleteError:
            return False
        return True

    return bool(_call(name, remove))
