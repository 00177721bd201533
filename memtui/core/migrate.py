"""Migrating an inherited flat corpus into one domain of the tree (seed 000 §7): five passes
an operator runs, one domain at a time, each resumable and recorded.

1. **inventory** (§7.1 pass 1): the v1 files the domain's seeds name (a list the operator
   gives, or ``seeds:`` in the node's ``AGENTS.md`` front matter) plus what memtui's own
   search finds for the domain's vocabulary (``vocabulary:``, else the node's title) over an
   index of the v1 folder; each item says why it was taken, each file left out why not.
2. **classify** (§7.1 pass 2): a class per item suggested from cheap signals
   (:func:`memtui.core.classify.suggest`), confirmed by the operator.
3. **rewrite** (§7.1 pass 3): each kept item becomes a *proposal* in the domain, never a
   direct write, checked first against the audit's own writing-practice rules (secrets,
   personal data, guide-not-diary, the §5 entry shape, links). An item holding a secret or
   personal data is not filed (the store would keep it); the report lists it, and every
   filed proposal the rules still find fault with, for a person to rewrite.
4. **index** (§7.1 pass 4): the domain's one-liners, made from the migrated content (the
   first sentence of each rewritten body), confirmed by the node's owner.
5. **gate** (§7.2): held-out triage cases through memtui's search over the migrated content,
   and through the v1 baseline (grep over the inherited ``MEMORY.md`` one-liners,
   :func:`memtui.core.search.triage.grep_rank`) measured the same way; a domain that does not
   beat it is "not migrated — re-classify", with the cases it lost.

**Where things live.** The v1 folder is only read: never written, never followed out of
(symbolic links are not followed), walked to at most ``max_files`` entries. What the passes
derive from it — a copy of its usable Markdown files and their search index, and the gate's
copy of the migrated content — lives in the workspace's ``.memtui/migrate/<domain>/``
(derived data, like the search index, rebuilt at will). The state of each domain's migration
is a record of the store table :data:`T_MIGRATIONS`, changed only by the one guarded write
(one audited write per pass, ``migrate.<pass>``).

**Resuming and refusing.** A pass killed midway wrote no state: run it again. The copy of
the v1 folder keeps what it had copied (a file already there with the same bytes is not
copied again) and the index is incremental, so a long inventory picks up where it stopped.
A second migration of the same domain while one runs is refused (:class:`MigrationBusy`):
each pass holds an ``flock`` on ``.memtui/migrate/<domain>/lock``, which the kernel frees
when its process dies.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterator

from memtui.core import atomic, classify, scan
from memtui.core.errors import MemtuiError, RefusedError
from memtui.core.files import is_inside, text_name
from memtui.core.findings import Finding
from memtui.core.frontmatter import split
from memtui.core.tree import MemoryTree, parse_index
from memtui.core.tree import shape
from memtui.core.workspace import NODE_INDEX, NOTEBOOK, Workspace

try:  # POSIX
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None  # type: ignore[assignment]

#: The store table of migrations: one record per domain.
T_MIGRATIONS = "migrations"
#: The passes, in order (seed 000 §7.1 passes 1–4, §7.2).
STEPS = ("inventory", "classify", "rewrite", "index", "gate")
#: Entries of the v1 folder looked at, at most, by default (files and folders).
MAX_FILES = 20_000
#: The largest v1 file copied (bytes); a larger one is not taken.
MAX_FILE_BYTES = 1024 * 1024
#: Search hits taken per vocabulary term.
PER_TERM = 8
#: A hit scoring below this share of the term's best hit is not taken.
RELATIVE_SCORE = 0.4
#: Not-taken files recorded one by one; beyond this only counted per reason.
NOT_TAKEN_LISTED = 500
#: The status of a domain whose gate failed (seed 000 §7.2).
NOT_MIGRATED = "not migrated — re-classify"
MIGRATED = "migrated"
#: The case and profile a migration's proposals carry when no profile acts.
PROFILE = "migration"

_LINE = re.compile(r"^\s*[-*]\s+\[(?P<title>[^\]]+)\]\((?P<target>[^)\s]+)\)\s*(?:[—–:-]+\s*(?P<line>.*))?$")
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)
_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.S)
_QUOTED = re.compile(r"„([^“]{6,})“|\"([^\"]{6,})\"")


class MigrationError(MemtuiError):
    """A pass cannot run now (out of order, a bad folder, a domain that is no node); the
    message says what to do."""


class MigrationBusy(RefusedError):
    """Another process is running a pass of the same domain's migration."""


ProgressFn = Callable[[str, int, int], None]


def slug(domain: str) -> str:
    """The folder name of ``domain``'s migration data (``support/parcels-lost`` →
    ``support__parcels-lost``)."""
    return domain.strip("/").replace("/", "__") or "_root"


def work_dir(ws: Workspace, domain: str) -> Path:
    """``.memtui/migrate/<slug>/``: what the passes derive for ``domain``."""
    return ws.state_dir / "migrate" / slug(domain)


def normal_domain(domain: str) -> str:
    """``domain`` as a memory-relative node path (``memory/`` and slashes stripped)."""
    domain = domain.strip().strip("/")
    return domain[len("memory/"):] if domain.startswith("memory/") else domain


@contextlib.contextmanager
def running(ws: Workspace, domain: str) -> Iterator[None]:
    """Hold the migration lock of ``domain`` for one pass.

    Raises:
        MigrationBusy: another live process holds it (its process id is named).
    """
    folder = work_dir(ws, domain)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        if _fcntl is not None:
            try:
                _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "another process"
                raise MigrationBusy(
                    f"a migration of {domain} is already running (process {holder}); wait for it to "
                    "finish before starting another pass of the same domain") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing frees the flock


# -- the state --------------------------------------------------------------------------------
def state(store: Any, domain: str) -> dict[str, Any] | None:
    """The migration record of ``domain`` (a copy), or ``None`` when none was started."""
    for doc in store.table(T_MIGRATIONS).all():
        if doc.get("domain") == domain:
            return json.loads(json.dumps(doc))
    return None


def all_states(store: Any) -> list[dict[str, Any]]:
    """Every domain's migration record, by domain."""
    return sorted((dict(d) for d in store.table(T_MIGRATIONS).all()), key=lambda d: d.get("domain", ""))


def _save(session: Any, domain: str, step: str, update: Callable[[Any, dict[str, Any]], Any]) -> Any:
    """One guarded, audited write (``migrate.<step>``) that reads the domain's record afresh
    under the lock, lets ``update(tx, record)`` change it, and stores it. Returns what
    ``update`` returned."""
    target = f"{session.ws.memory_rel}/{domain}".strip("/")

    def change(tx: Any) -> Any:
        table = tx.table(T_MIGRATIONS)
        found = [d for d in table.all() if d.get("domain") == domain]
        record = json.loads(json.dumps(found[0])) if found else {"domain": domain, "step": None, "status": "in progress",
                                                                  "times": {}}
        before = atomic.sha256(json.dumps(record, sort_keys=True).encode())
        result = update(tx, record)
        if found:
            table.update(_replace_all(record), doc_ids=[found[0].doc_id])
        else:
            table.insert(record)
        tx.hashes(before, atomic.sha256(json.dumps(record, sort_keys=True).encode()))
        tx.detail.update({"domain": domain, "step": step, "status": record.get("status")})
        return result

    return session.write(f"migrate.{step}", target, change).result


def _replace_all(record: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def put(doc: dict[str, Any]) -> None:
        doc.clear()
        doc.update(record)
    return put


def _require(record: dict[str, Any] | None, domain: str, step: str) -> dict[str, Any]:
    """The record, when the pass before ``step`` is done; else a sentence naming it."""
    wanted = STEPS[STEPS.index(step) - 1]
    done = record.get("step") if record else None
    if done is None or STEPS.index(done) < STEPS.index(wanted):
        raise MigrationError(f"the {wanted} pass of {domain} is not done yet; run `memtui migrate {wanted} "
                             f"--domain {domain}` first")
    assert record is not None
    return record


def _cpu() -> float:
    """CPU seconds (user + system) of this process and of its finished children (the index
    build's worker processes)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _timed(record: dict[str, Any], step: str, started: float, cpu: float) -> None:
    record.setdefault("times", {})[step] = {"seconds": round(time.perf_counter() - started, 3),
                                            "cpu_seconds": round(_cpu() - cpu, 3)}


# -- pass 1: inventory ------------------------------------------------------------------------
@dataclass(slots=True)
class _Walk:
    copied: int = 0
    resumed: int = 0
    looked: int = 0
    stopped: bool = False


def _not_taken(out: dict[str, Any], name: str, reason: str) -> None:
    counts = out.setdefault("not_taken_counts", {})
    counts[reason] = counts.get(reason, 0) + 1
    listed = out.setdefault("not_taken", [])
    if len(listed) < NOT_TAKEN_LISTED:
        listed.append({"file": name, "reason": reason})


def _shown_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 shown as ``\\xNN``."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _usable_file(v1: Path, entry: os.DirEntry) -> tuple[bytes | None, str]:
    """The bytes of a V1DIR file memtui can migrate (a regular Markdown file, not a link, within
    the size limit, UTF-8 text), or ``None`` and why it is not taken."""
    if entry.is_symlink():
        where = "outside V1DIR" if not is_inside(v1, Path(os.path.realpath(entry.path))) else "inside V1DIR"
        return None, f"a symbolic link leading {where}; links are not followed"
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    if not stat.S_ISREG(st.st_mode):
        return None, "not a regular file"
    if not entry.name.lower().endswith(".md"):
        return None, "not a Markdown memory file"
    if st.st_size > MAX_FILE_BYTES:
        return None, f"larger than {MAX_FILE_BYTES // 1024} KiB"
    try:
        with open(entry.path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    if b"\0" in data[:8192] or not _utf8(data):
        return None, "binary or not UTF-8 text"
    return data, ""


def _copy_v1(v1: Path, mirror: Path, max_files: int, out: dict[str, Any],
             progress: ProgressFn | None) -> tuple[_Walk, dict[str, bytes]]:
    """Copy the usable Markdown files of ``v1`` into ``mirror`` (flat names: ``a/b.md`` →
    ``a__b.md``), recording what is not taken and why. Returns the walk's counts and the
    inherited index (``MEMORY.md`` at the top) as bytes by name."""
    walk = _Walk()
    keep: set[str] = set()
    index: dict[str, bytes] = {}
    mirror.mkdir(parents=True, exist_ok=True)
    pending = [(os.fspath(v1), "")]
    while pending and not walk.stopped:
        folder, prefix = pending.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            _not_taken(out, prefix or ".", f"cannot be listed ({exc.strerror})")
            continue
        for entry in entries:
            walk.looked += 1
            if walk.looked > max_files:
                walk.stopped = True
                break
            if progress and walk.looked % 500 == 0:
                progress("inventory", walk.looked, 0)
            name = prefix + entry.name
            if not text_name(entry.name):
                _not_taken(out, _shown_name(name), "its name is not UTF-8 text")
                continue
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append((entry.path, name + "/"))
                continue
            data, why_not = _usable_file(v1, entry)
            if data is None:
                _not_taken(out, name, why_not)
                continue
            if name == NOTEBOOK:
                index[name] = data
                continue
            flat = name.replace("/", "__")
            keep.add(flat)
            target_path = mirror / flat
            try:
                if target_path.stat().st_size == len(data) and target_path.read_bytes() == data:
                    walk.resumed += 1
                    continue
            except OSError:
                pass
            atomic.write_bytes(target_path, data, durable=False)
            walk.copied += 1
    if not walk.stopped:  # a full walk: what v1 no longer holds leaves the copy
        for old in mirror.iterdir():
            if old.name not in keep and old.name != NODE_INDEX and old.is_file():
                old.unlink()
    return walk, index


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _v1_lines(index: bytes | None, present: set[str], out: dict[str, Any]) -> list[dict[str, Any]]:
    """The inherited index's one-liners: ``{"file", "title", "line", "text", "at"}`` of each
    line naming a file the copy holds; a line naming a missing file is recorded as not
    taken."""
    lines: list[dict[str, Any]] = []
    if index is None:
        return lines
    for n, raw in enumerate(index.decode("utf-8").splitlines(), start=1):
        m = _LINE.match(raw)
        if not m:
            continue
        target = m.group("target").split("#", 1)[0]
        flat = target.lstrip("./").replace("/", "__")
        if flat not in present:
            _not_taken(out, target, f"{NOTEBOOK} line {n} points at it, but V1DIR holds no such file")
            continue
        lines.append({"file": flat, "title": m.group("title").strip(), "line": (m.group("line") or "").strip(),
                      "text": raw.strip(), "at": n})
    return lines


def _mirror_ws(ws: Workspace, domain: str) -> Workspace:
    root = work_dir(ws, domain) / "v1"
    (root / "memory").mkdir(parents=True, exist_ok=True)
    return Workspace.open(root)


def _node_meta(ws: Workspace, domain: str) -> dict[str, Any]:
    path = ws.memory / domain / NODE_INDEX
    try:
        meta = split(path.read_text("utf-8")).meta
    except (OSError, UnicodeDecodeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return []


def inventory(session: Any, domain: str, v1dir: str | os.PathLike[str], *, seeds: list[str] | None = None,
              vocabulary: list[str] | None = None, max_files: int = MAX_FILES,
              progress: ProgressFn | None = None) -> dict[str, Any]:
    """Pass 1 (seed 000 §7.1): what the domain takes from ``v1dir``, each item with why.

    Args:
        session: a writable :class:`memtui.core.session.Session`.
        domain: the node to migrate into (memory-relative; it must exist, with an owner).
        v1dir: the inherited folder (only read; links are not followed out of it).
        seeds: the v1 file names the domain's seeds name (default: ``seeds:`` in the node's
            front matter).
        vocabulary: search terms (default: ``vocabulary:`` in the node's front matter, else
            its title).
        max_files: the most entries of ``v1dir`` looked at; the rest is reported as not taken.
        progress: called with ``("inventory", done, total)`` while copying and indexing.

    Returns:
        The domain's migration record after the pass.

    Raises:
        MigrationError: ``v1dir`` is not a folder, holds the workspace, or ``domain`` is no node.
        MigrationBusy: the same domain's migration is running elsewhere.
        ReadOnlyError, OSError: as for any guarded write.
    """
    from memtui.core.search.index import SearchIndex
    from memtui.core.search.query import QueryError, search

    session.require_writable()
    ws: Workspace = session.ws
    domain = normal_domain(domain)
    tree = MemoryTree(ws)
    if not tree.is_node(domain):
        raise MigrationError(f"{domain or 'the root'} is not a node of the memory tree (no {NODE_INDEX}); "
                             "create the domain's node with its owner first")
    given = Path(v1dir).expanduser()
    if not given.is_dir():
        raise MigrationError(f"{given} is not a folder; give the folder of the inherited memory files")
    v1 = Path(os.path.realpath(given))
    if is_inside(v1, ws.root):
        raise MigrationError(f"the workspace lies inside {given}; the inherited folder is never written, so "
                             "migrate into a workspace outside it")
    started, cpu = time.perf_counter(), _cpu()
    with running(ws, domain):
        out: dict[str, Any] = {}
        mirror_ws = _mirror_ws(ws, domain)
        walk, index_files = _copy_v1(v1, mirror_ws.memory, max_files, out, progress)
        if walk.stopped:
            _not_taken(out, "…", f"the walk stopped after {max_files} entries; the rest of V1DIR was not "
                                 "looked at (raise --max-files to take more)")
        present = {p.name for p in mirror_ws.memory.iterdir() if p.name != NODE_INDEX and p.is_file()}
        lines = _v1_lines(index_files.get(NOTEBOOK), present, out)
        by_file = {ln["file"]: ln for ln in lines}
        agents = "---\nowner: v1\n---\n# v1\n\n## Articles\n\n" + "".join(ln["text"] + "\n" for ln in lines)
        agents_path = mirror_ws.memory / NODE_INDEX
        if not agents_path.exists() or agents_path.read_text("utf-8") != agents:
            atomic.write_text(agents_path, agents)
        index = SearchIndex(mirror_ws)
        index.update(progress=(lambda done, total: progress("index", done, total)) if progress else None)
        meta = _node_meta(ws, domain)
        named = seeds if seeds else _strings(meta.get("seeds"))
        terms = vocabulary if vocabulary else (_strings(meta.get("vocabulary")) or [tree.index(domain).title or domain])
        why: dict[str, list[str]] = {}
        for name in named:
            flat = name.strip().lstrip("./").replace("/", "__")
            if flat in present:
                why.setdefault(flat, []).append("named by the domain's seeds")
            else:
                _not_taken(out, name, "named by the domain's seeds, but V1DIR holds no such file")
        for term in terms:
            try:
                res = search(index, term, limit=PER_TERM, snippets=False)
            except QueryError:
                continue
            rank = 0
            top = res.hits[0].score if res.hits else 0.0
            for hit in res.hits:
                if hit.score < RELATIVE_SCORE * top:  # far below the best hit: the term's noise
                    break
                path = hit.target if hit.kind == "index-line" and hit.target else hit.path
                name = PurePosixPath(path).name
                if name not in present:
                    continue
                rank += 1
                reason = f"found by searching {term!r} (rank {rank})"
                if reason not in why.setdefault(name, []) and not any(r.startswith(f"found by searching {term!r}")
                                                                      for r in why[name]):
                    why[name].append(reason)
        items = []
        named_flat = {n.strip().lstrip("./").replace("/", "__") for n in named}
        # the seeds' files first: of two near-duplicates the first is kept (classify.suggest)
        for name in sorted(why, key=lambda n: (n not in named_flat, n)):
            data = (mirror_ws.memory / name).read_bytes()
            text = data.decode("utf-8")
            line = by_file.get(name, {})
            items.append({"file": name, "sha256": atomic.sha256(data), "bytes": len(data), "why": why[name],
                          "title": line.get("title") or _title(text, name), "one_liner": line.get("line", ""),
                          "class": None, "reason": None, "confirmed": False, "suggested": None,
                          "proposal": None, "findings": [], "held": False})
        for name in sorted(present - set(why)):
            _not_taken(out, name, "not named by the domain's seeds and not found by its vocabulary")

        def update(tx: Any, record: dict[str, Any]) -> None:
            filed = {i["file"]: i for i in record.get("items", []) if i.get("proposal")}
            record.update({"v1": os.fspath(v1), "step": "inventory", "status": "in progress",
                           "items": [filed.get(i["file"], i) for i in items],
                           "not_taken": out.get("not_taken", []), "not_taken_counts": out.get("not_taken_counts", {}),
                           "seeds": named, "vocabulary": terms, "v1_lines": len(lines),
                           "walk": {"looked": walk.looked, "copied": walk.copied, "resumed": walk.resumed,
                                    "stopped": walk.stopped}})
            record.pop("gate", None)
            _timed(record, "inventory", started, cpu)

        _save(session, domain, "inventory", update)
    return state(session.store, domain) or {}


def _title(text: str, name: str) -> str:
    m = _HEADING.search(text)
    return m.group(1).strip() if m else PurePosixPath(name).stem.replace("-", " ")


# -- pass 2: classify -------------------------------------------------------------------------
def classify_items(session: Any, domain: str, *, accept_suggested: bool = False,
                   choices: dict[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """Pass 2 (seed 000 §7.1): suggest a class for each item and record what the operator
    confirms.

    Args:
        accept_suggested: confirm every item not yet confirmed with its suggested class.
        choices: file → ``(class, reason)`` the operator chose (one of
            :data:`memtui.core.classify.MIGRATE_CLASSES`).

    Returns:
        The record; the pass is done (``step`` ``classify``) when every item is confirmed.

    Raises:
        MigrationError: the inventory is not done, a choice names no item or no class.
    """
    ws: Workspace = session.ws
    domain = normal_domain(domain)
    choices = choices or {}
    for cls, _reason in choices.values():
        if cls not in classify.MIGRATE_CLASSES:
            raise MigrationError(f"{cls!r} is not a migration class; use one of {', '.join(classify.MIGRATE_CLASSES)}")
    started, cpu = time.perf_counter(), _cpu()
    with running(ws, domain):
        record = _require(state(session.store, domain), domain, "classify")
        unknown = set(choices) - {i["file"] for i in record["items"]}
        if unknown:
            raise MigrationError(f"no item of the inventory is named {sorted(unknown)[0]!r}; "
                                 "`memtui migrate report` lists the items")
        mirror = _mirror_ws(ws, domain).memory
        active = _active_articles(ws, domain)

        def update(tx: Any, rec: dict[str, Any]) -> None:
            seen: list[tuple[str, set[str]]] = list(active)
            for item in rec["items"]:
                try:
                    text = (mirror / item["file"]).read_text("utf-8")
                except OSError:
                    text = ""
                s = classify.suggest(item["file"], text, item.get("one_liner", ""), seen)
                item["suggested"] = s.to_json()
                if s.cls != "drop":
                    seen.append((item["file"], classify.words(text)))
                if item["file"] in choices:
                    item["class"], item["reason"] = choices[item["file"]][0], choices[item["file"]][1] or "chosen by the operator"
                    item["confirmed"] = True
                elif accept_suggested and not item.get("confirmed"):
                    item["class"], item["reason"], item["confirmed"] = s.cls, s.reason, True
            if all(i.get("confirmed") for i in rec["items"]):  # an empty inventory has nothing to confirm
                rec["step"] = "classify"
                rec["status"] = "in progress"
            _timed(rec, "classify", started, cpu)

        _save(session, domain, "classify", update)
    return state(session.store, domain) or {}


def _active_articles(ws: Workspace, domain: str) -> list[tuple[str, set[str]]]:
    """``(workspace path, words)`` of the domain node's own articles."""
    out = []
    folder = ws.memory / domain
    for path in sorted(folder.glob("*.md")):
        if path.name == NODE_INDEX or path.is_symlink():
            continue
        try:
            out.append((ws.shown(path), classify.words(path.read_text("utf-8"))))
        except (OSError, UnicodeDecodeError):
            continue
    return out


# -- pass 3: rewrite --------------------------------------------------------------------------
def experience_node(ws: Workspace, domain: str) -> str:
    """Where the domain's experience entries go (seed 000 §5): the domain itself when it is an
    experience node, else the nearest ``experience`` node below it or beside an ancestor
    (``support/parcels-lost`` → ``support/experience``), else the domain."""
    tree = MemoryTree(ws)
    if shape.is_experience(domain):
        return domain
    parts = domain.split("/")
    for i in range(len(parts), -1, -1):
        candidate = "/".join([*parts[:i], "experience"])
        if tree.is_node(candidate):
            return candidate
    return domain


def rewritten(item: dict[str, Any], text: str, cls: str) -> tuple[str, str, str]:
    """The migrated article of one item: ``(content, title, one-liner)``.

    The body is the inherited text without its top heading; the front matter carries the
    entry id (the v1 file's stem: the held-out cases name precedents by it), the title, a
    summary made from the body's first sentence (seed 000 §7.1 pass 4: rewritten from the
    content, not carried over), the class, and — for an experience entry — the symptom when
    the text quotes the customer. What the rules still find is for a person to fix.
    """
    body = _HEADING.sub("", text, count=1).strip()
    title = item.get("title") or _title(text, item["file"])
    head = body.split("\n", 1)[0].strip()
    first = _SENTENCE.match(head)
    summary = (first.group(1) if first else head)[:160].strip().rstrip(":")
    stem = PurePosixPath(item["file"]).stem
    meta = {"id": stem, "title": title, "summary": summary, "class": cls, "migrated_from": f"v1/{item['file']}"}
    if cls == "experience":
        quoted = _QUOTED.search(body)
        if quoted:
            meta["symptom"] = quoted.group(1) or quoted.group(2)
    head = "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in meta.items())
    return f"---\n{head}---\n\n{body}\n", title, summary


def practice(ws: Workspace, node: str, name: str, content: str, cls: str) -> list[Finding]:
    """The audit's writing-practice findings for ``content`` as the article ``node/name``
    (seed 000 §2 rule 2, §5): secrets, personal data, guide-not-diary (a date or a session
    reference in the body), the experience-entry shape, and links that leave the workspace or
    point at nothing."""
    doc = split(content)
    shown = "/".join(p for p in (ws.memory_rel, node, name) if p)
    found = list(scan.findings_many([content], [shown])[0])
    meta = doc.meta if isinstance(doc.meta, dict) else {}
    folder = os.fspath(ws.memory / node)
    if cls == "experience" or shape.is_experience(node):
        found.extend(shape.experience_findings(meta, shown, folder, os.fspath(ws.root)))
    found.extend(shape.diary_findings(doc.body, shown, doc.body_line))
    links = shape.collect_links(doc.body, doc.body_line)
    for line, target, _anchor in links:
        if target and (target.startswith("/") or not is_inside(ws.root, Path(folder) / target)):
            found.append(Finding.make("link-outside", shown, f"the link {target!r} leads outside the workspace",
                                      "link only to files inside the workspace", line=line))
    found.extend(shape.resolve_links(links, os.path.join(folder, name), shown, os.fspath(ws.root), {}))
    return found


#: Findings that keep an item from being filed at all: the store would keep the value.
HOLDS = ("secret", "pii-")


def rewrite(session: Any, domain: str) -> dict[str, Any]:
    """Pass 3 (seed 000 §7.1): file each kept item (mechanic, article, experience) as a
    proposal with its class and reason, after the writing-practice check (:func:`practice`).

    An item whose text holds a secret or personal data is held back (``held``) and listed for
    a person to rewrite; the other findings are kept with the proposal's item. All proposals of
    the pass are filed in one guarded write; items filed by an earlier run are not filed again.

    Raises:
        MigrationError: the classification is not done.
    """
    from memtui.core.governance.actions import propose_in

    ws: Workspace = session.ws
    domain = normal_domain(domain)
    started, cpu = time.perf_counter(), _cpu()
    with running(ws, domain):
        _require(state(session.store, domain), domain, "rewrite")
        mirror = _mirror_ws(ws, domain).memory
        exp_node = experience_node(ws, domain)

        def update(tx: Any, rec: dict[str, Any]) -> None:
            for item in rec["items"]:
                cls = item.get("class")
                if cls not in classify.KEPT or item.get("proposal"):
                    continue
                try:
                    text = (mirror / item["file"]).read_text("utf-8")
                except OSError as exc:
                    item["findings"] = [{"code": "unreadable", "message": f"the copy cannot be read ({exc.strerror})"}]
                    item["held"] = True
                    continue
                node = exp_node if cls == "experience" else domain
                name = item["file"] if item["file"].endswith(".md") else item["file"] + ".md"
                content, title, line = rewritten(item, text, cls)
                found = practice(ws, node, name, content, cls)
                item["findings"] = [{"code": f.code, "message": f.message, "line": f.line} for f in found]
                item["node"] = node
                if any(f.code.startswith(HOLDS) for f in found):
                    item["held"] = True
                    continue
                item["held"] = False
                v = propose_in(tx, node, name, content, case=f"migration:{domain}", source_request=f"v1:{item['file']}",
                               profile=session.profile or PROFILE, sources=[f"v1/{item['file']}"], title=title,
                               one_liner=line, classification=classify.classification(cls, item.get("reason") or cls))
                item["proposal"] = v.id
                item["one_liner_new"] = line
            rec["step"], rec["status"] = "rewrite", "in progress"
            _timed(rec, "rewrite", started, cpu)

        _save(session, domain, "rewrite", update)
    return state(session.store, domain) or {}


# -- pass 4: index ----------------------------------------------------------------------------
def index_lines(record: dict[str, Any]) -> list[dict[str, str]]:
    """The domain's one-liners from the migrated content: ``{"file", "node", "line"}`` per
    filed proposal, as the node index will list it."""
    out = []
    for item in record.get("items", []):
        if item.get("proposal"):
            name = item["proposal"].rsplit("@", 1)[0].rsplit("/", 1)[-1]
            out.append({"file": item["file"], "node": item.get("node", record["domain"]),
                        "line": f"- [{item.get('title') or name}]({name}) — {item.get('one_liner_new', '')}"})
    return out


def index(session: Any, domain: str, *, confirm: bool) -> dict[str, Any]:
    """Pass 4 (seed 000 §7.1): record the owner's confirmation of the domain's one-liners
    (:func:`index_lines`); approving each proposal writes its line into the node index.

    Raises:
        MigrationError: the rewrite is not done, or ``confirm`` is false (the lines are in
            the message's report, not recorded).
        RefusedError: the acting profile is not the domain's owner.
    """
    from memtui.core.governance.rules import require_owner

    ws: Workspace = session.ws
    domain = normal_domain(domain)
    started, cpu = time.perf_counter(), _cpu()
    with running(ws, domain):
        record = _require(state(session.store, domain), domain, "index")
        lines = index_lines(record)
        if not confirm:
            raise MigrationError(f"{len(lines)} one-liners await the owner's confirmation; read them with "
                                 f"`memtui migrate report --domain {domain}` and confirm with --confirm")
        owner = require_owner(session, domain, "confirm the index of")

        def update(tx: Any, rec: dict[str, Any]) -> None:
            rec["index"] = {"lines": lines, "confirmed_by": owner}
            rec["step"], rec["status"] = "index", "in progress"
            _timed(rec, "index", started, cpu)

        _save(session, domain, "index", update)
    return state(session.store, domain) or {}


# -- pass 5: gate -----------------------------------------------------------------------------
def _gate_ws(ws: Workspace, record: dict[str, Any], store: Any) -> Workspace:
    """The migrated content alone, as a workspace of its own (``.memtui/migrate/<d>/gate``):
    each filed proposal as its article, the confirmed one-liners as the node indexes."""
    from memtui.core.governance import Ledger

    root = work_dir(ws, record["domain"]) / "gate"
    memory = root / "memory"
    if memory.exists():
        shutil.rmtree(memory)
    memory.mkdir(parents=True)
    ledger = Ledger(store)
    by_node: dict[str, list[str]] = {}
    for line in record.get("index", {}).get("lines", []):
        by_node.setdefault(line["node"], []).append(line["line"])
    for item in record.get("items", []):
        if not item.get("proposal"):
            continue
        v = ledger.get(item["proposal"])
        target = memory / v.article
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(target, v.content)
    for node, lines in by_node.items():
        folder = memory / node
        folder.mkdir(parents=True, exist_ok=True)
        atomic.write_text(folder / NODE_INDEX, f"---\nowner: migration\n---\n# {node}\n\n## Articles\n\n"
                          + "".join(ln + "\n" for ln in lines))
    return Workspace.open(root)


def gate(session: Any, domain: str, cases_path: Path, k: int = 5) -> dict[str, Any]:
    """Pass 5, the acceptance test (seed 000 §7.2): the held-out cases through memtui's search
    over the migrated content and through the v1 baseline (grep over the inherited one-liners),
    both ranked top ``k`` with no threshold. Beating the baseline's hit@k marks the domain
    migrated; otherwise it is :data:`NOT_MIGRATED`, its items go back to classification, and
    the cases it lost (the baseline's hits it missed) are recorded.

    Raises:
        MigrationError: the index pass is not done. CasesError: the cases file is unusable.
    """
    from memtui.core.search import triage
    from memtui.core.search.index import SearchIndex

    ws: Workspace = session.ws
    domain = normal_domain(domain)
    cases = triage.load_cases(Path(cases_path))
    started, cpu = time.perf_counter(), _cpu()
    with running(ws, domain):
        record = _require(state(session.store, domain), domain, "gate")
        gate_ws = _gate_ws(ws, record, session.store)
        gindex = SearchIndex(gate_ws)
        gindex.update()
        ids = triage.entry_ids(gate_ws)
        cands = triage.candidates(gindex, cases, ids)
        ours = [triage.Ranked(c.id, c.entries[:k], c.scores[:k], c.ms) for c in cands]
        cut = [c.assess(triage.confidence.DEFAULT) for c in cands]
        mirror = _mirror_ws(ws, domain)
        agents = (mirror.memory / NODE_INDEX).read_text("utf-8")
        text_lines = agents.splitlines()
        lines = [(text_lines[e.line - 1].lower(), PurePosixPath(e.path).stem)
                 for e in parse_index(agents, "", NODE_INDEX).entries if e.path and e.line <= len(text_lines)]
        base = triage.grep_rank(lines, cases, k)
        m_ours, m_base, m_cut = (triage.metrics(cases, r, k) for r in (ours, base, cut))
        hit = f"hit@{k}"

        def found(r: triage.Ranked, c: triage.Case) -> bool:
            return any(e in c.relevant for e in r.ranked[:k])

        by_ours, by_base = {r.id: r for r in ours}, {r.id: r for r in base}
        lost = [c.id for c in cases if c.relevant and found(by_base[c.id], c) and not found(by_ours[c.id], c)]
        won = [c.id for c in cases if c.relevant and found(by_ours[c.id], c) and not found(by_base[c.id], c)]
        beats = (m_ours.get(hit) or 0) > (m_base.get(hit) or 0)
        figures = {"cases": len(cases), "k": k, "memtui": _figures(m_ours, k), "baseline": _figures(m_base, k),
                   "memtui_with_cut": _figures(m_cut, k), "beats_baseline": beats, "lost": lost, "won": won,
                   "cases_file": os.fspath(cases_path)}

        def update(tx: Any, rec: dict[str, Any]) -> None:
            rec["gate"] = figures
            if beats:
                rec["status"], rec["step"] = MIGRATED, "gate"
            else:
                rec["status"], rec["step"] = NOT_MIGRATED, "inventory"
                for item in rec["items"]:
                    item["confirmed"] = False
            _timed(rec, "gate", started, cpu)

        _save(session, domain, "gate", update)
    return state(session.store, domain) or {}


def _figures(m: dict[str, Any], k: int) -> dict[str, Any]:
    return {"hit@1": m.get("hit@1"), f"hit@{k}": m.get(f"hit@{k}"), "mrr": m.get("mrr"),
            "false_precedent_rate": m.get("false_precedent_rate"),
            "first_relevant_rank_mean": m.get("first_relevant_rank_mean"),
            "first_relevant_ms_median": m.get("first_relevant_ms_median")}


# -- the report -------------------------------------------------------------------------------
def report(record: dict[str, Any]) -> dict[str, Any]:
    """The pass report of one domain (JSON-ready): ``{"domain", "v1", "step", "next",
    "status", "counts" (per class given, and how many items are not confirmed), "items", "dropped" ([{file, reason}]),
    "to_rewrite" ([{file, proposal, findings}]), "held", "proposals" ([{id, class}]),
    "not_taken_counts", "not_taken", "index", "gate", "times", "walk", "rule"}``."""
    items = record.get("items", [])
    counts: dict[str, int] = {c: 0 for c in classify.MIGRATE_CLASSES}
    unconfirmed = 0
    for i in items:
        if i.get("class"):
            counts[i["class"]] = counts.get(i["class"], 0) + 1
        if not i.get("confirmed"):
            unconfirmed += 1
    step = record.get("step")
    nxt = None if step == "gate" else STEPS[0] if step is None else STEPS[STEPS.index(step) + 1]
    return {
        "domain": record.get("domain"), "v1": record.get("v1"), "step": step, "next": nxt,
        "status": record.get("status"), "counts": {**counts, "unconfirmed": unconfirmed, "items": len(items)},
        "items": [{"file": i["file"], "why": i.get("why", []), "class": i.get("class"), "reason": i.get("reason"),
                   "confirmed": i.get("confirmed", False), "suggested": i.get("suggested"),
                   "proposal": i.get("proposal")} for i in items],
        "dropped": [{"file": i["file"], "reason": i.get("reason")} for i in items if i.get("class") == "drop"],
        "index_line_only": [{"file": i["file"], "reason": i.get("reason")} for i in items
                            if i.get("class") == "index-line"],
        "to_rewrite": [{"file": i["file"], "proposal": i.get("proposal"), "held": i.get("held", False),
                        "findings": i.get("findings", [])} for i in items if i.get("findings")],
        "held": [i["file"] for i in items if i.get("held")],
        "proposals": [{"id": i["proposal"], "class": i.get("class")} for i in items if i.get("proposal")],
        "not_taken_counts": record.get("not_taken_counts", {}), "not_taken": record.get("not_taken", []),
        "index": record.get("index"), "gate": record.get("gate"), "times": record.get("times", {}),
        "walk": record.get("walk"), "rule": "seed 000 §7.1, §7.2, §7.5",
    }


def _pct(v: Any) -> str:
    return "—" if v is None else f"{v * 100:.1f}%"


def markdown(rep: dict[str, Any], limit: int = 40) -> str:
    """The report as Markdown, for a person (lists past ``limit`` rows say how many more)."""
    out = [f"# Migration of {rep['domain']}", "",
           f"- status: **{rep['status'] or 'not started'}**; last pass done: {rep['step'] or 'none'}"
           + (f"; next: `{rep['next']}`" if rep["next"] else ""),
           f"- inherited folder: {rep['v1']}"]
    walk = rep.get("walk") or {}
    if walk:
        out.append(f"- walk: {walk.get('looked', 0)} entries looked at, {walk.get('copied', 0)} copied, "
                   f"{walk.get('resumed', 0)} already copied (resumed)" + (", stopped at the limit" if walk.get("stopped") else ""))
    c = rep["counts"]
    out += ["", "## Counts per class", "", "| class | items |", "|---|---|"]
    out += [f"| {name} | {c.get(name, 0)} |" for name in classify.MIGRATE_CLASSES]
    out += [f"| (not confirmed) | {c['unconfirmed']} |"]
    out += [f"| all items | {c['items']} |", ""]

    def rows(title: str, entries: list[str]) -> None:
        out.extend([f"## {title}", ""])
        out.extend(entries[:limit] or ["(none)"])
        if len(entries) > limit:
            out.append(f"- … and {len(entries) - limit} more (`--json` lists them all)")
        out.append("")

    def state_of(i: dict[str, Any]) -> str:
        if i["confirmed"]:
            return str(i["class"])
        if i["suggested"]:
            return f"{i['suggested']['class']} (suggested, not confirmed)"
        return "not classified yet"

    rows("Items", [f"- {i['file']}: {state_of(i)} — {'; '.join(i['why'])}" for i in rep["items"]])
    rows("Dropped, and why", [f"- {d['file']}: {d['reason']}" for d in rep["dropped"]])
    rows("Index line only", [f"- {d['file']}: {d['reason']}" for d in rep["index_line_only"]])
    rows("Proposals filed", [f"- {p['id']} ({p['class']})" for p in rep["proposals"]])
    rows("Still to be rewritten by a person",
         [f"- {r['file']}{' (held back: not filed)' if r['held'] else ' → ' + str(r['proposal'])}: "
          + "; ".join(f['message'] for f in r["findings"]) for r in rep["to_rewrite"]])
    rows("Not taken, by reason", [f"- {n} × {reason}" for reason, n in sorted(rep["not_taken_counts"].items(),
                                                                           key=lambda kv: -kv[1])])
    if rep.get("index"):
        rows(f"Index (confirmed by {rep['index'].get('confirmed_by')})", [ln["line"] for ln in rep["index"]["lines"]])
    g = rep.get("gate")
    if g:
        k = g["k"]
        out += ["## Gate: held-out cases against the v1 baseline", "",
                f"{g['cases']} cases; top {k}, no threshold, the same for both.", "",
                "| | memtui (migrated) | v1 grep baseline | memtui, confident answers only |", "|---|---|---|---|"]
        for key in ("hit@1", f"hit@{k}", "false_precedent_rate"):
            out.append(f"| {key} | {_pct(g['memtui'].get(key))} | {_pct(g['baseline'].get(key))} | "
                       f"{_pct(g['memtui_with_cut'].get(key))} |")
        out += ["", f"- beats the baseline: **{'yes' if g['beats_baseline'] else 'no'}**",
                f"- cases lost to the baseline: {', '.join(g['lost']) or 'none'}",
                f"- cases won over the baseline: {', '.join(g['won']) or 'none'}"]
        if not g["beats_baseline"]:
            out.append(f"- {rep['domain']} is not migrated: re-classify its items (`memtui migrate classify`) "
                       "so the lost cases' precedents are kept, then run the passes again")
        out.append("")
    if rep["times"]:
        out += ["## Time of each pass", "", "| pass | seconds | CPU seconds |", "|---|---|---|"]
        out += [f"| {s} | {t['seconds']:.2f} | {t['cpu_seconds']:.2f} |" for s, t in rep["times"].items()]
        out.append("")
    return "\n".join(out)
