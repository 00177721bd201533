"""Secrets in the texts outside the memory tree's articles and indexes: the member
notes, the notebook, the operator files, the graph's observations, the session histories, the
skills (every text file of a skill folder) and memtui's store (its versions and proposals hold
article text). An entry of :data:`memtui.core.audit.CHECKS`.

Each file's findings are cached by size and modification time (:class:`ScanCache`, in the
user cache folder like the article cache), so a re-audit of an unchanged workspace reads none
of them again. A value already reported elsewhere is not reported again for the store, which
holds copies of article text.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from memtui.core.files import is_inside
from memtui.core.findings import Finding
from memtui.core.tree.audit import ArticleCache, ArticleFacts
from memtui.core.workspace import Workspace

#: Text files of a skill folder that are scanned (scripts were never copied; binaries are skipped).
SKILL_TEXT = (".md", ".txt", ".json", ".yaml", ".yml", ".toml", ".py", ".sh", ".js", ".ts", ".env", ".ini", ".cfg")


class ScanCache(ArticleCache):
    """Per-file secret findings of the non-article texts, keyed by (size, mtime_ns)."""

    FOLDER = "scan"


def texts(ws: Workspace) -> Iterator[Path]:
    """Every non-article text file the scan reads, absolute (links are never followed, nor
    files behind a folder that is a link leading outside, such as ``.memtui``)."""
    return (path for path in _texts(ws) if is_inside(ws.root, path))


def _texts(ws: Workspace) -> Iterator[Path]:
    for path in [ws.member_notes, ws.notebook, *ws.operator_files, ws.graph_file]:
        if path.is_file() and not path.is_symlink():
            yield path
    sessions = ws.root / "sessions" / "durable"
    if sessions.is_dir() and ws.linked_outside(sessions) is None:  # not even the names through a link out
        for entry in sorted(os.scandir(sessions), key=lambda e: e.name):
            if entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
                yield Path(entry.path)
    for root in ws.skill_roots.values():
        if not root.is_dir() or root.is_symlink():
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(folder, d)))
            for name in sorted(files):
                full = os.path.join(folder, name)
                if name.lower().endswith(SKILL_TEXT) and not os.path.islink(full):
                    yield Path(full)
    store = ws.state_dir / "store.json"
    if store.is_file() and not store.is_symlink():
        yield store


#: Store fields that hold memtui's own identifiers (content hashes, ids), never user text: a
#: SHA-256 in them is what it says, not a secret.
OWN_FIELDS = frozenset({"id", "hash", "sha256", "before", "after", "old", "new", "client_id", "request",
                        "fingerprint", "line_hashes", "entry", "version", "time", "created", "at"})


def store_findings(data: bytes, shown: str) -> list[Finding]:
    """``secret`` findings of the user text inside memtui's store (article versions, proposals,
    provenance, notes of the audit log), each naming its table, record and field."""
    from memtui.core import jsonio

    try:
        doc = jsonio.loads(data, allow_nan=True)
    except ValueError:
        return []  # a damaged store has its own finding
    out: list[Finding] = []
    if isinstance(doc, dict):
        for table, records in doc.items():
            if isinstance(records, dict):
                for doc_id, record in records.items():
                    out.extend(record_findings(table, doc_id, record, shown))
    return out


def record_findings(table: str, doc_id: str, record: object, shown: str) -> list[Finding]:
    """``secret`` findings of the user text in one store record (``table``, ``doc_id``), placed
    at ``shown`` (the store's path), as :func:`store_findings` gives them for that record."""
    from memtui.core import scan

    out: list[Finding] = []

    def walk(value: object, where: str, key: str | None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}.{k}", str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]", key)
        elif isinstance(value, str) and key not in OWN_FIELDS and len(value) >= 8:
            for finding in scan.secret_findings(value, shown):
                out.append(Finding.make(
                    "secret", shown, f"{where} (line {finding.line} of that text) {finding.message}",
                    finding.fix.replace(f"{shown}:{finding.line}", f"{shown}"), fingerprint=finding.fingerprint,
                    reference=finding.reference))

    walk(record, f"table {table} record {doc_id}", None)
    return out


def scan_file(ws: Workspace, path: Path, cache: ArticleCache | None) -> list[Finding]:
    """The secret findings of one file (through ``cache`` when given)."""
    from memtui.core import scan

    shown = ws.shown(path)
    try:
        stat = os.stat(path)
    except OSError:
        return []
    stamp = (stat.st_size, stat.st_mtime_ns)
    facts = cache.get(shown, stamp) if cache is not None else None
    if facts is None:
        try:
            with open(path, "rb") as handle:
                data = handle.read(max(ws.config.max_file_bytes, 1))
        except OSError:
            return []
        if b"\0" in data[:8192]:
            found: list[Finding] = []
        elif path.name == "store.json" and path.parent == ws.state_dir:
            found = store_findings(data, shown)
        else:
            found = scan.secret_findings(data.decode("utf-8", "replace"), shown)
        facts = ArticleFacts(found, None, "")
        if cache is not None:
            cache.put(shown, stamp, facts)
    return list(facts.findings)


def audit_findings(ws: Workspace) -> list[Finding]:
    """``secret`` findings of every non-article text (see the module docstring)."""
    cache = ScanCache.load(ws)
    found: list[Finding] = []
    store_findings: list[Finding] = []
    for path in texts(ws):
        got = scan_file(ws, path, cache)
        (store_findings if path.name == "store.json" and path.parent == ws.state_dir else found).extend(got)
    if cache.new or len(cache.hits) != len(cache.entries):
        cache.save(ws)
    seen = {f.fingerprint for f in found}
    found.extend(f for f in store_findings if f.fingerprint not in seen)
    return found


def tree_fingerprints(findings: list[Finding]) -> set[str]:
    """Fingerprints of ``findings`` (to leave out the store's copies of what the tree shows)."""
    return {f.fingerprint for f in findings if f.fingerprint}
