"""What a backup may not commit (DESIGN.md §4 invariant 8: "never writes a secret
into the repository or the backup tree").

:func:`open_secrets` scans a rendered :class:`~memtui.core.backup.render.BackupTree` — the
very bytes a backup would write, so nothing changed between a check and the commit — and
returns the ``secret`` findings no allowance covers. ``memtui backup`` refuses to write or
commit anything while there is one (``BackupBlocked``, exit 1), naming each place.

Results are cached by content (SHA-256 and size, :class:`BackupScanCache` in the user cache
folder), so a backup of an unchanged workspace scans nothing again.
"""

from __future__ import annotations

import hashlib
from typing import Any

from memtui.core.findings import Finding
from memtui.core.tree.audit import ArticleCache, ArticleFacts
from memtui.core.workspace import Workspace


class BackupScanCache(ArticleCache):
    """Secret findings per backed-up file, keyed by (size, first 48 bits of its SHA-256)."""

    FOLDER = "backup-scan"


def _walk_tables(tables: dict[str, dict[str, Any]]) -> list[Finding]:
    from memtui.core.scan.workspace import store_findings

    import json

    return store_findings(json.dumps(tables, ensure_ascii=False).encode("utf-8"), ".memtui/store.json")


def open_secrets(ws: Workspace, tree: Any, store: Any = None) -> list[Finding]:
    """The ``secret`` findings of every file of ``tree`` (workspace files, the remote graph's
    snapshot, and the store records) that no allowance (:mod:`memtui.core.scan.allow`) covers.

    Args:
        ws: the workspace the tree was rendered from.
        tree: the rendered backup tree (``files/<path>`` entries and ``tables``).
        store: the workspace's store (for the allowances), read-only is enough.
    """
    from memtui.core import scan
    from memtui.core.backup import render as rd
    from memtui.core.scan import allow

    cache = BackupScanCache.load(ws)
    found: list[Finding] = []
    remote = getattr(rd, "REMOTE_GRAPH", None)  # the remote graph's snapshot
    for name, entry in sorted(tree.files.items()):
        if name.startswith(rd.FILES):
            shown = rd.shown(name[len(rd.FILES):])
        elif remote is not None and name == remote:
            shown = f"remote graph ({rd.shown(name)} in the backup)"
        else:
            continue
        data = entry.data
        stamp = (len(data), int(hashlib.sha256(data).hexdigest()[:12], 16))
        facts = cache.get(shown, stamp)
        if facts is None:
            if b"\0" in data[:8192]:
                hits: list[Finding] = []
            else:
                hits = scan.secret_findings(data.decode("utf-8", "replace"), shown)
            facts = ArticleFacts(hits, None, "")
            cache.put(shown, stamp, facts)
        found.extend(facts.findings)
    if cache.new or len(cache.hits) != len(cache.entries):
        cache.save(ws)
    if tree.tables:
        seen = {f.fingerprint for f in found}
        found.extend(f for f in _walk_tables(tree.tables) if f.fingerprint not in seen)
    kept, _allowed = allow.split(found, allow.keys(store))
    return kept
