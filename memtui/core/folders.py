"""Checks made folder by folder (the names of the entries directly in a folder), kept between
audits so that after a change only the folders it touched are looked at again.

A check gives :func:`findings_after` a ``look`` (one folder → the findings of its own entries
and the sub-folders its walk enters) and a ``reachable`` (does its whole walk enter a folder);
the findings of every folder are kept in the check's ``memo``. Used by the stray-file check
(:mod:`memtui.core.strays`) and the folders without an index (:mod:`memtui.core.tree.integrity`).
"""

from __future__ import annotations

from typing import Callable

from memtui.core.findings import Finding

#: One folder (relative to the walk's root, ``""`` the root) → ``(findings of the entries
#: directly in it, the sub-folders the walk enters)``, or ``None`` when it cannot be listed.
Look = Callable[[str], "tuple[list[Finding], list[str]] | None"]


def findings_after(memo: dict, changed: list[str] | None, look: Look, reachable: Callable[[str], bool]
                   ) -> list[Finding]:
    """The findings of a whole walk, looking again only at what ``changed`` touched.

    A changed path's folder is looked at again (its own entries); a changed path that is a
    folder the walk enters is walked whole, and a folder that is gone is dropped with every
    folder below it.

    Args:
        memo: the check's findings by folder from the last call (``{}`` the first time); its
            ``"folders"`` entry is replaced, never changed in place, so an earlier report
            keeps its own.
        changed: paths relative to the walk's root (``/``) added, changed or removed since the
            last call; ``None`` walks everything.
        look: one folder's findings and the sub-folders to enter.
        reachable: whether the whole walk enters a folder (every folder above it entered).

    Returns:
        The findings of every folder, in the walk's order for a whole walk.
    """
    known: dict[str, list[Finding]] | None = memo.get("folders")
    if changed is None or known is None or "" in changed:  # "": the walk's root itself
        folders: dict[str, list[Finding]] = {}
        _walk([""], folders, look)
    else:
        folders = dict(known)
        again: list[str] = []
        for path in changed:
            below = path + "/"
            for folder in [f for f in folders if f == path or f.startswith(below)]:
                del folders[folder]  # a folder changed or gone: walked again below if it is there
            parent = path.rsplit("/", 1)[0] if "/" in path else ""
            if parent in folders or reachable(parent):
                again.append(parent)
        wanted = set(changed)
        for parent in dict.fromkeys(again):
            for sub in _look(parent, folders, look):
                if sub in wanted and sub not in folders:
                    _walk([sub], folders, look)
    memo["folders"] = folders
    return [finding for found in folders.values() for finding in found]


def _look(folder: str, folders: dict[str, list[Finding]], look: Look) -> list[str]:
    seen = look(folder)
    if seen is None:
        folders.pop(folder, None)
        return []
    folders[folder] = seen[0]
    return seen[1]


def _walk(start: list[str], folders: dict[str, list[Finding]], look: Look) -> None:
    """Walk ``start`` and every folder below them (depth first, in the order ``look`` gives)."""
    stack = list(start)
    while stack:
        stack.extend(reversed(_look(stack.pop(), folders, look)))
