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
        OSError: the folder cannot be created or written.
    """
    file = path()
    file.parent.mkdir(parents=True, exist_ok=True)
    try:
        doc = tomlkit.parse(file.read_text(encoding="utf-8"))
    except (OSError, Exception):  # a missing or broken file is replaced by a fresh one
        doc = tomlkit.document()
    doc[key] = value
    write_text(file, tomlkit.dumps(doc))
