"""A cheap signature of a backup repository's history, so an open view notices a backup that
another process (the CLI, cron) made.

Only file metadata is read — the repository's ``HEAD``, the branch it names, ``packed-refs``
and the reflog of ``HEAD`` — never a git command, so looking costs microseconds and runs
nothing the repository holds (its hooks or configured programs).
"""

from __future__ import annotations

import os
from pathlib import Path


def _git_dir(repo: Path) -> Path | None:
    dot = repo / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():  # a linked worktree or submodule: "gitdir: <path>"
        try:
            line = dot.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None
        if line.startswith("gitdir:"):
            target = Path(line.removeprefix("gitdir:").strip())
            return target if target.is_absolute() else repo / target
        return None
    if (repo / "HEAD").is_file() and (repo / "objects").is_dir():  # a bare repository
        return repo
    return None


def head_signature(repo: str | os.PathLike[str] | None) -> tuple[tuple[str, int, int], ...]:
    """What the repository's history looks like from outside, as ``(name, mtime_ns, size)``.

    Args:
        repo: the backup repository's folder (``None``: no repository configured).

    Returns:
        A tuple that changes when a commit lands, a branch moves or the repository appears or
        goes; ``()`` when there is no repository. Never raises.
    """
    if not repo:
        return ()
    git_dir = _git_dir(Path(repo))
    if git_dir is None:
        return ()
    names = ["HEAD", "packed-refs", "logs/HEAD"]
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        head = ""
    if head.startswith("ref:"):
        names.append(head.removeprefix("ref:").strip())
    out = []
    for name in names:
        try:
            st = os.stat(git_dir / name)
        except (OSError, ValueError):
            continue
        out.append((name, st.st_mtime_ns, st.st_size))
    return tuple(out)
