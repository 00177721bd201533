"""Eval sets: the triage cases that belong to a domain (seed 000 §7.2, §7.4b).

A node holds its eval set in ``<node>/evals/cases.jsonl``: the triage case format that
``memtui eval triage`` reads (one JSON object a line: ``id``, ``ticket``, ``language``,
``relevant``, ``near_miss``; see ``../shared/triage/README.md``). The set belongs to the
node's owning profile (the node's resolved owner, seed 000 §7.4b "one canonical writer"),
and it is governed like an article: it changes only through a proposal that its owner
approves (``memtui propose --node NODE --article evals/cases.jsonl --from FILE …``), so every
change of the cases is a version with provenance.

The domains a change sits in (:func:`domains_of`) are the article's node and its ancestors
that hold an eval set — not every set of the tree (seed 000 §7.4b "dependency-scoped
evaluation"). The audit (:func:`audit_findings`) reports a set whose ids are not entries of
the memory, duplicate case ids, cases with no language, a file that cannot be read or is over
:data:`MAX_BYTES`, and a set that is not a governed version.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from memtui.core.errors import MemtuiError
from memtui.core.findings import Finding
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace

if TYPE_CHECKING:
    from memtui.core.search.triage import Case

#: The folder of a node that holds its eval set, and the set's file in it.
EVAL_DIR = "evals"
EVAL_FILE = "cases.jsonl"
#: The eval set's path inside its node folder.
EVAL_REL = f"{EVAL_DIR}/{EVAL_FILE}"
#: The largest eval set read (bytes): a few thousand cases are some megabytes; anything far
#: larger is a mistake (a log pasted in), refused before it is read.
MAX_BYTES = 8 * 1024 * 1024
#: Deepest chain of ancestors followed; a chain longer than this is taken for a cycle.
MAX_DEPTH = 256


class EvalSetError(MemtuiError):
    """An eval set cannot be used; the message names the file and what to do."""


def set_path(node: str) -> str:
    """The memory-relative path of ``node``'s eval set (``support/experience/evals/cases.jsonl``)."""
    return f"{node}/{EVAL_REL}" if node else EVAL_REL


def is_set_path(path: str) -> bool:
    """True when the memory-relative ``path`` is an eval set's file (``…/evals/cases.jsonl``)."""
    return path == EVAL_REL or path.endswith("/" + EVAL_REL)


def node_of_set(path: str) -> str:
    """The node an eval set's file belongs to (``support/experience`` for
    ``support/experience/evals/cases.jsonl``)."""
    parent = str(PurePosixPath(path).parent.parent)
    return "" if parent == "." else parent


@dataclass(slots=True)
class EvalSet:
    """A node's eval set as read: its node, owner, cases (the usable ones), the findings of
    reading it, and its bytes' size."""

    node: str
    owner: str | None
    cases: list[Case] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    size: int = 0
    #: the file, workspace-relative (the place of its findings)
    place: str = ""

    @property
    def shown(self) -> str:
        """The set's file, as shown to people (memory-relative)."""
        return set_path(self.node)


def set_file(ws: Workspace, node: str):  # noqa: ANN201 - Path
    """The file of ``node``'s eval set (it may not exist)."""
    return ws.memory / set_path(node)


def has_set(ws: Workspace, node: str) -> bool:
    """True when ``node`` holds an eval set file."""
    return os.path.isfile(set_file(ws, node))


def parse(text: str, shown: str) -> tuple[list[Case], list[Finding]]:
    """The cases of an eval set's text, and a finding for each line that cannot be used.

    A line that is not JSON, or lacks a text ``id`` or ``ticket``, is an ``eval-set-bad-line``
    and is left out; a second case with an id already used is ``eval-case-duplicate`` and is
    left out; a case with no ``language`` is ``eval-case-no-language`` (kept: its figures
    are still measured, only not per language).
    """
    from memtui.core.search.triage import Case

    cases: list[Case] = []
    findings: list[Finding] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            findings.append(Finding.make("eval-set-bad-line", shown, f"line {n} is not JSON ({exc.msg})",
                                         "write one JSON object a line, as `memtui eval triage --help` describes",
                                         line=n))
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not isinstance(obj.get("ticket"), str):
            findings.append(Finding.make("eval-set-bad-line", shown, f'line {n} needs a text "id" and a text "ticket"',
                                         'give the case its "id" and the "ticket" as it arrived', line=n))
            continue
        cid = obj["id"]
        if cid in seen:
            findings.append(Finding.make("eval-case-duplicate", shown,
                                         f"case {cid} is given again (first on line {seen[cid]}); the repeat is left out",
                                         "give each case its own id", line=n))
            continue
        seen[cid] = n
        if not str(obj.get("language") or "").strip():
            findings.append(Finding.make("eval-case-no-language", shown,
                                         f"case {cid} says no language, so its figures are not counted per language",
                                         'add "language": "bg", "bg-latn", "en" or "mixed"', line=n))
        cases.append(Case(cid, obj["ticket"], str(obj.get("language") or ""),
                          [str(x) for x in obj.get("relevant") or []], [str(x) for x in obj.get("near_miss") or []],
                          str(obj.get("form") or obj.get("style") or "")))
    return cases, findings


def unknown_ids(cases: list[Case], ids: set[str], shown: str) -> list[Finding]:
    """``eval-case-unknown-id`` for each case naming an entry id the memory does not hold."""
    out = []
    for c in cases:
        missing = [e for e in [*c.relevant, *c.near_miss] if e not in ids]
        if missing:
            out.append(Finding.make("eval-case-unknown-id", shown,
                                    f"case {c.id} names {', '.join(missing)}, which no article of the memory has as its id",
                                    "correct the id, or propose the set again without the case"))
    return out


def read_text_capped(path, shown: str, limit: int = MAX_BYTES) -> str:  # noqa: ANN001 - Path
    """The text of an eval set file, refused before reading when over ``limit`` bytes.

    Raises:
        EvalSetError: over the limit, unreadable, or not UTF-8.
    """
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise EvalSetError(f"{shown} cannot be read ({exc.strerror or exc}).") from exc
    if size > limit:
        raise EvalSetError(f"{shown} holds {size:,} bytes, more than an eval set may ({limit:,}); "
                           "split it, or keep only the cases this domain needs.")
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
        return data.decode("utf-8")
    except OSError as exc:
        raise EvalSetError(f"{shown} cannot be read ({exc.strerror or exc}).") from exc
    except UnicodeDecodeError as exc:
        raise EvalSetError(f"{shown} is not UTF-8 text (byte {exc.start}); save it as UTF-8.") from exc


def load(ws: Workspace, node: str, tree: MemoryTree | None = None) -> EvalSet:
    """Read ``node``'s eval set; problems become findings (a set that cannot be read at all
    has no cases and one ``eval-set-unreadable`` finding)."""
    tree = tree or MemoryTree(ws)
    shown = ws.shown(set_file(ws, node))
    owner = tree.owner(node)[0]
    try:
        text = read_text_capped(set_file(ws, node), shown)
    except EvalSetError as exc:
        return EvalSet(node, owner, [], [Finding.make("eval-set-unreadable", shown, str(exc),
                                                      "propose a corrected set")], place=shown)
    cases, findings = parse(text, shown)
    return EvalSet(node, owner, cases, findings, len(text.encode("utf-8")), shown)


def domains_of(ws: Workspace, nodes: list[str], tree: MemoryTree | None = None) -> list[str]:
    """The domains a change to ``nodes`` sits in: each node and its ancestors, those that hold
    an eval set, nearest first, each once (seed 000 §7.4b: not every set of the tree).

    Raises:
        EvalSetError: a node's chain of ancestors leads back into itself (a folder linked to
            one of its own ancestors) or is deeper than :data:`MAX_DEPTH`.
    """
    tree = tree or MemoryTree(ws)
    out: list[str] = []
    for start in nodes:
        seen: set[str] = set()
        current: str | None = start
        depth = 0
        while current is not None:
            real = os.path.realpath(ws.memory / current) if current else os.path.realpath(ws.memory)
            if real in seen or depth > MAX_DEPTH:
                raise EvalSetError(f"the ancestors of {start or 'the root'} lead back to {current or 'the root'} "
                                   "(a folder linked to one of its own ancestors); replace the link with a real "
                                   "folder before changing articles here.")
            seen.add(real)
            if current not in out and has_set(ws, current):
                out.append(current)
            current = tree.parent_node(current)
            depth += 1
    return out


def all_sets(ws: Workspace) -> list[str]:
    """Every node folder holding an eval set (memory-relative, sorted); hidden folders and
    symbolic links are not entered."""
    out = []
    root = ws.memory
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(folder, d)))
        if os.path.basename(folder) == EVAL_DIR and EVAL_FILE in files:
            node_dir = os.path.dirname(folder)
            rel = os.path.relpath(node_dir, root).replace(os.sep, "/")
            out.append("" if rel == "." else rel)
    return sorted(out)


#: The store table of each domain's last figures: ``{"node", "at", "figures", "by"}``, one row a
#: node, replaced by each measurement recorded (a governed change, or ``memtui eval domains --run``).
T_FIGURES = "eval_figures"


def record_figures(table, node: str, figures: dict, at: str, by: str) -> None:  # noqa: ANN001 - tinydb Table
    """Within a guarded write: ``node``'s last figures are now ``figures`` (measured ``at``,
    by ``by``: the change or run that measured them)."""
    from tinydb import Query

    row = {"node": node, "at": at, "figures": figures, "by": by}
    if table.search(Query().node == node):
        table.update(row, Query().node == node)
    else:
        table.insert(row)


def last_figures(store, node: str) -> dict | None:  # noqa: ANN001 - Store
    """``node``'s last recorded figures (:func:`record_figures`), or ``None``."""
    from tinydb import Query

    try:
        rows = store.table(T_FIGURES).search(Query().node == node)
    except Exception:  # noqa: BLE001 - a store that cannot be read has no figures to show
        return None
    return rows[0] if rows else None


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def summary_line(ws: Workspace, store, node: str, tree: MemoryTree | None = None) -> str:  # noqa: ANN001 - Store
    """One line for the Tree area: the eval set of ``node`` (or of its nearest ancestor that has
    one) with its last figures beside the grep baseline — beats / does not beat / no cases;
    ``""`` when neither the node nor an ancestor holds an eval set."""
    tree = tree or MemoryTree(ws)
    try:
        domains = domains_of(ws, [node], tree)
    except EvalSetError as exc:
        return f"eval set: {exc}"
    if not domains:  # a domain with no eval set has nothing to show (most trees have none)
        return ""
    domain = domains[0]
    where = "eval set" if domain == node else f"eval set of {domain or 'the root'}"
    es = load(ws, domain, tree)
    problems = [f for f in es.findings if f.severity.value == "error"]
    head = f"{where}: {len(es.cases)} cases" + (f", {len(problems)} problems (see the audit)" if problems else "")
    last = last_figures(store, domain)
    if last is None:
        return f"{head} · not measured yet (memtui eval domains --run)"
    fig = last.get("figures") or {}
    beats = {True: "beats", False: "does NOT beat", None: "no cases with a precedent"}[fig.get("beats")]
    return (f"{head} · hit@5 {_pct(fig.get('hit@5'))} vs grep {_pct(fig.get('baseline_hit@5'))}: {beats} "
            f"· hit@1 {_pct(fig.get('hit@1'))} · false prec. {_pct(fig.get('false_precedent_rate'))} "
            f"· {str(last.get('at') or '')[:16].replace('T', ' ')}")
