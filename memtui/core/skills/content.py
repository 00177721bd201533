"""A skill's content: the files of its folder, as one version holds them, and their hash.

A skill version holds every plain file of the skill folder as UTF-8 text (``SKILL.md``, the
manifest, its tests and references). Its **content hash** is the SHA-256 of the sorted list
of ``path NUL sha256(bytes)`` lines, so it names exactly those paths with exactly those
bytes; a test result is bound to it (seed 000 Part II §10: "its own tests re-run before an
amended version is used"). File modes are not part of the hash (runs recorded before modes were
kept stay bound to their content); the paths whose owner may execute them are kept beside the
files (:attr:`Content.executable`, a version's ``executable``) and given back when the version
is written out, so a test command that is a script of the folder (``tests/smoke.sh``) runs from
a version as it does from the folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from memtui.core.files import is_inside, rel, text_name

#: Folders left out of a skill's content (version control, caches a test run leaves).
SKIP_DIRS = frozenset({".git", ".memtui", "__pycache__", "node_modules", ".pytest_cache", ".mypy_cache",
                       ".ruff_cache"})

#: Most files one skill version holds.
MAX_FILES = 500

#: Most bytes one skill version holds, all files together.
MAX_CONTENT_BYTES = 4 * 1024 * 1024


class ContentError(ValueError):
    """A folder cannot be taken as a skill version; ``str(exc)`` says why and what to do."""


@dataclass(slots=True)
class Content:
    """The files of a skill folder: ``{relative path: text}`` and their hash; ``executable``:
    the paths among them whose owner may execute them."""

    files: dict[str, str] = field(default_factory=dict)
    executable: frozenset[str] = frozenset()

    @property
    def sha256(self) -> str:
        return content_hash(self.files)

    @property
    def size(self) -> int:
        return sum(len(t.encode("utf-8")) for t in self.files.values())


def content_hash(files: dict[str, str]) -> str:
    """The content hash of ``files`` (module docstring)."""
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode("utf-8") + b"\0" + hashlib.sha256(files[path].encode("utf-8")).hexdigest().encode()
                 + b"\n")
    return h.hexdigest()


def read_content(folder: str | os.PathLike[str], *, confine_to: Path | None = None) -> Content:
    """Read every plain file of ``folder`` (sub-folders included, :data:`SKIP_DIRS` left out).

    Args:
        folder: the skill folder.
        confine_to: when given, ``folder`` (a link resolved) must lie inside it.

    Raises:
        ContentError: the folder is missing or leads outside ``confine_to``; it holds a
            symbolic link, a special file, a file or name that is not UTF-8, more than
            :data:`MAX_FILES` files or more than :data:`MAX_CONTENT_BYTES` bytes.
    """
    root = Path(folder)
    if confine_to is not None and not is_inside(confine_to, root):
        raise ContentError(f"{root} leads outside the workspace (a symbolic link to {os.path.realpath(root)}); "
                           "memtui reads nothing through it")
    if not root.is_dir():
        raise ContentError(f"{root} is not a folder")
    real = Path(os.path.realpath(root))
    out: dict[str, str] = {}
    runnable: set[str] = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(real, followlinks=False):
        here = Path(dirpath)
        kept = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS:
                continue
            if (here / d).is_symlink():
                raise ContentError(f"{rel(real, here / d)} is a symbolic link; a skill version holds plain files only")
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            full = here / name
            shown = rel(real, full)
            if not text_name(shown):
                raise ContentError(f"a file name in {root.name} is not UTF-8 text; rename it")
            if full.is_symlink() or not full.is_file():
                raise ContentError(f"{shown} is a symbolic link or a special file; a skill version holds plain files only")
            if len(out) >= MAX_FILES:
                raise ContentError(f"the folder holds more than {MAX_FILES} files; a skill version holds at most that")
            data = full.read_bytes()
            if os.stat(full).st_mode & stat.S_IXUSR:
                runnable.add(shown)
            total += len(data)
            if total > MAX_CONTENT_BYTES:
                raise ContentError(f"the folder holds more than {MAX_CONTENT_BYTES:,} bytes; "
                                   "a skill version holds at most that")
            try:
                out[shown] = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ContentError(f"{shown} is not UTF-8 text (byte {exc.start}); a skill version holds text files") from exc
    return Content(out, frozenset(runnable))


def write_content(files: dict[str, str], dest: Path, executable: Iterable[str] = ()) -> None:
    """Write ``files`` under the new folder ``dest`` (a scratch copy a test runs in); the
    paths in ``executable`` are made executable (``0o755``, the others ``0o644``).

    Raises:
        ContentError: a path would land outside ``dest``.
    """
    dest.mkdir(parents=True, exist_ok=True)
    runnable = set(executable)
    for path, text in files.items():
        target = dest / path
        if not is_inside(dest, target) or ".." in Path(path).parts or Path(path).is_absolute():
            raise ContentError(f"{path!r} would land outside the skill folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
        os.chmod(target, 0o755 if path in runnable else 0o644)


@contextmanager
def scratch_folder(prefix: str = "memtui-skill-") -> Iterator[Path]:
    """A new empty folder outside the workspace (the system's temporary folder), removed with
    everything in it when the block ends: where a skill version is copied to run its tests,
    and the ``HOME`` of a test run."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
