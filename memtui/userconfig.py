"""The user config file, ``<config_dir>/config.toml`` (the last theme chosen; ``[keys]``, the
keys rebound by binding id, :mod:`memtui.ui.keys`).

Written with tomlkit so a user's own comments and layout survive memtui's updates.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import tomlkit

from memtui.core.atomic import write_text
from memtui.paths import config_dir


def path() -> Path:
    """The config file's path (it may not exist)."""
    return config_dir() / "config.toml"


class UnreadableConfig(OSError):
    """The user config file exists but cannot be read as TOML: memtui never writes over it
    (the user's keys and comments would be lost); ``str(exc)`` says where it is broken."""


def problem() -> str | None:
    """Why the user config file cannot be read (a sentence naming the file and the place), or
    ``None`` when it is absent or reads as TOML."""
    file = path()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        return f"{file} cannot be read ({exc})"
    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        return f"{file} is not valid TOML ({exc})"
    return None


def get(key: str) -> str | None:
    """The string value of ``key``, or ``None`` when unset or the file is unreadable."""
    try:
        data = tomllib.loads(path().read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError):
        return None
    value = data.get(key)
    return value if isinstance(value, str) else None


def table(key: str) -> object:
    """The raw value of ``key`` (a table is a ``dict``), or ``None`` when unset or the file is
    unreadable; the caller checks its shape."""
    try:
        data = tomllib.loads(path().read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    return data.get(key)


def set_value(key: str, value: str) -> None:
    """Set ``key`` to ``value``, keeping the rest of the file as it was.

    Raises:
        UnreadableConfig: the file exists but is not valid TOML; it is left as it is (writing a
            fresh file would drop the user's keys and comments).
        OSError: the folder cannot be created or written.
    """
    file = path()
    broken = problem()
    if broken:
        raise UnreadableConfig(f"{broken}; memtui does not write over it, so nothing was remembered: "
                               "fix the file by hand")
    file.parent.mkdir(parents=True, exist_ok=True)
    try:
        doc = tomlkit.parse(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        doc = tomlkit.document()
    doc[key] = value
    write_text(file, tomlkit.dumps(doc))
