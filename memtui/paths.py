"""Where memtui keeps the user's things: config, data, bundled resources.

``MEMTUI_CONFIG_DIR`` and ``MEMTUI_DATA_DIR`` override the platform folders (tests use them).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

_PACKAGE = Path(__file__).resolve().parent


def config_dir() -> Path:
    """The user config folder (``~/.config/memtui`` on Linux)."""
    return Path(os.environ.get("MEMTUI_CONFIG_DIR") or platformdirs.user_config_dir("memtui"))


def data_dir() -> Path:
    """The user data folder (``~/.local/share/memtui`` on Linux)."""
    return Path(os.environ.get("MEMTUI_DATA_DIR") or platformdirs.user_data_dir("memtui"))


def cache_dir() -> Path:
    """The user cache folder (``~/.cache/memtui`` on Linux); ``MEMTUI_CACHE_DIR`` overrides it."""
    return Path(os.environ.get("MEMTUI_CACHE_DIR") or platformdirs.user_cache_dir("memtui"))


def bundled(name: str) -> Path:
    """A bundled resource folder (``themes`` or ``sample_workspace``).

    Installed from a wheel it lies in ``memtui/_data/``; from a source checkout (editable
    install) it is the repository's top-level folder.

    Raises:
        FileNotFoundError: neither place has it (a broken install).
    """
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the bundled folder {name!r} is missing; reinstall memtui")
