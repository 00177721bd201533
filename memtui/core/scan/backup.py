"""What a backup may not commit (DESIGN.md §4 invariant 8: "never writes a secret
into the repository or the backup tree").

:func:`open_secrets` scans a rendered :class:`~memtui.core.backup.render.BackupTree` — the
very bytes a backup would write, so nothing changed between a check and the commit — and
returns the ``secret`` findings no allowance covers. ``memtui backup`` refuses to write or
commit anything while there is one (``BackupBlocked``, exit 1), naming each place.

Results are cached by content (SHA-256 and size, :class:`BackupScanCache` in the user cache
folder; the store's records each by the hash of its rendered text, :class:`StoreScanCache`),
so a backup scans only what changed since the last one. Both caches are written atomically and
dropped whole when the scan's rule set changes (:func:`memtui.core.scan.rules_fingerprint`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from memtui.core.findings import Finding
from memtui.core.tree.audit import ArticleCache, ArticleFacts, cache_file
from memtui.core.workspace import Workspace


class BackupScanCache(ArticleCache):
    """Secret findings per backed-up file, keyed by (size, first 48 bits of its SHA-256)."""

    FOLDER = "backup-scan"


class StoreScanCache:
    """Secret findings per store record, keyed by table and by the hash of the record's text as
    the backup tree renders it (its ``## Record`` heading, so its id, included): a record that
    did not change is not scanned again. Kept in the user cache folder beside
    :class:`BackupScanCache`; a changed memtui version or scan rule set drops it whole."""

    FOLDER = "backup-scan-store"
    FORMAT = 1

    def __init__(self, tables: dict[str, dict[str, list]] | None = None) -> None:
        self.tables: dict[str, dict[str, list]] = tables or {}
        self.met: dict[str, dict[str, list]] = {}
        self.scanned = 0  # records scanned this time (the rest came from the cache)

    @staticmethod
    def _head(ws: Workspace) -> list:
        import os

        from memtui import __version__
        from memtui.core import scan

        return [StoreScanCache.FORMAT, __version__, os.fspath(ws.root), scan.rules_fingerprint()]

    @classmethod
    def load(cls, ws: Workspace) -> "StoreScanCache":
        """The cache of ``ws`` (empty when absent, unreadable, or of another version or rule set)."""
        from memtui.core import jsonio

        try:
            data = jsonio.loads(cache_file(cls.FOLDER, ws).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict) or data.get("head") != cls._head(ws) or not isinstance(data.get("tables"), dict):
            return cls()
        return cls(data["tables"])

    def findings(self, table: str, doc_id: str, record: Any, rendered: bytes | None) -> list[Finding]:
        """The findings of one record: from the cache when ``rendered`` (its text in the backup
        tree) hashes as before, else scanned (and remembered)."""
        from memtui.core.scan.workspace import record_findings
        from memtui.core.tree.audit import _finding_from

        key = hashlib.sha256(rendered).hexdigest()[:24] if rendered is not None else None
        known = self.tables.get(table, {}).get(key) if key is not None else None
        if known is not None:
            found = [_finding_from(d) for d in known]
        else:
            found = record_findings(table, doc_id, record, ".memtui/store.json")
            self.scanned += 1
        if key is not None:
            self.met.setdefault(table, {})[key] = known if known is not None else [f.to_json() for f in found]
        return found

    def save(self, ws: Workspace) -> None:
        """Keep the records met this time (the rest are gone), atomically; a failure to write is
        ignored (the cache only saves time)."""
        import json

        from memtui.core.atomic import write_text

        file = cache_file(self.FOLDER, ws)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            write_text(file, json.dumps({"head": self._head(ws), "tables": self.met}, ensure_ascii=False,
                                        separators=(",", ":")))
        except (OSError, ValueError):
            pass


def _record_texts(tree: Any, name: str, table: dict[str, Any]) -> dict[str, bytes]:
    """Each record's text in the rendered table ``store/<name>.md`` of ``tree`` (from its
    ``## Record`` heading to the next), by doc id; ``{}`` when the table was not rendered as
    expected (then every record is scanned)."""
    from memtui.core.backup import render as rd

    data = tree.files.get(rd.table_file(name))
    raw = getattr(data, "data", data)
    if not isinstance(raw, bytes):
        return {}
    pieces = raw.split(b"\n## Record ")[1:]
    ids = rd._sorted_ids(table)
    if len(pieces) != len(ids):
        return {}
    return dict(zip(ids, pieces, strict=True))


def _table_findings(ws: Workspace, tree: Any) -> list[Finding]:
    """The ``secret`` findings of the store's records in ``tree``, scanning only records whose
    rendered text changed since the last backup (:class:`StoreScanCache`)."""
    cache = StoreScanCache.load(ws)
    found: list[Finding] = []
    for name, table in tree.tables.items():
        if not isinstance(table, dict):
            continue
        texts = _record_texts(tree, name, table)
        for doc_id, record in table.items():
            found.extend(cache.findings(name, doc_id, record, texts.get(doc_id)))
    if cache.scanned or cache.met != cache.tables:
        cache.save(ws)
    return found


def open_secrets(ws: Workspace, tree: Any, store: Any = None) -> list[Finding]:
    """The ``secret`` findings of every file of ``tree`` (workspace files, the remote graph's
    snapshot, and the store records) that no allowance (:mod:`memtui.core.scan.allow`) covers.

    Args:
        ws: the workspace the tree was rendered from.
        tree: the rendered backup tree (``files/<path>`` entries and ``tables``).
        store: the workspace's store (for the allowances), read-only is enough; or a function
            that opens it, called only when there is a finding to check.
    """
    from memtui.core.scan import allow

    found = tree_secrets(ws, tree)
    if not found:
        return []
    if callable(store):
        store = store()
    kept, _allowed = allow.split(found, allow.keys(store))
    return kept


def tree_secrets(ws: Workspace, tree: Any) -> list[Finding]:
    """The ``secret`` findings of every file of ``tree``, allowed or not (see :func:`open_secrets`).
    A file is scanned only when its content (size and SHA-256) was not scanned before
    (:class:`BackupScanCache`); the store's records only when they changed
    (:class:`StoreScanCache`), or not at all for a store the backup took as unchanged (its
    findings are then ``tree.store_findings``). Sets ``tree.store_findings`` for a parsed store."""
    from memtui.core import scan
    from memtui.core.backup import render as rd

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
        stamp = (entry.size, int(entry.digest[:12], 16))
        facts = cache.get(shown, stamp)
        if facts is None:
            data = entry.data
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
        tree.store_findings = _table_findings(ws, tree)
    elif tree.tables is not None:
        tree.store_findings = []
    if tree.store_findings:
        seen = {f.fingerprint for f in found}
        found.extend(f for f in tree.store_findings if f.fingerprint not in seen)
    return found
