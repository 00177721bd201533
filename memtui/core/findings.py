"""Findings: one problem an audit found (DESIGN.md §1, invariant 10).

A finding is data, never an exception: every reader in ``memtui.core`` turns bad input
into a :class:`Finding` with a place and a suggested fix, and goes on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class Severity(str, Enum):
    """How bad a finding is. ``error`` makes ``memtui audit`` exit 1."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for error, 1 for warning, 2 for info: the sort order of a findings list."""
        return {"error": 0, "warning": 1, "info": 2}[self.value]


#: Every finding code memtui emits, with its severity and a one-line meaning.
#: The table is the documentation of ``memtui audit`` (``memtui audit --codes``).
CODES: dict[str, tuple[Severity, str]] = {
    "index-missing-file": (Severity.ERROR, "a node index line points at a file that does not exist"),
    "index-duplicate": (Severity.WARNING, "a node index lists the same file more than once"),
    "index-line-malformed": (Severity.WARNING, "a list line in a node index has no usable link"),
    "article-unlisted": (Severity.WARNING, "an article is not listed in its node index"),
    "one-liner-mismatch": (Severity.WARNING, "the index one-liner differs from the article's `summary`"),
    "front-matter-invalid": (Severity.ERROR, "YAML front matter cannot be parsed"),
    "front-matter-unclosed": (Severity.ERROR, "front matter opened with `---` is never closed"),
    "front-matter-duplicate-key": (Severity.WARNING, "a front matter key is given twice (the last value is used)"),
    "front-matter-not-mapping": (Severity.ERROR, "front matter is not a mapping of keys to values"),
    "front-matter-second-block": (Severity.ERROR, "a second front matter block follows the first; its keys are read as body text"),
    "not-utf8": (Severity.ERROR, "a text file is not valid UTF-8 (or is binary)"),
    "file-unreadable": (Severity.ERROR, "a file cannot be read (permissions, or it vanished)"),
    "file-too-large": (Severity.WARNING, "a file is over the size limit and was not read whole"),
    "link-outside": (Severity.ERROR, "a relative link leaves the workspace"),
    "symlink-outside": (Severity.ERROR, "a symbolic link points outside the workspace (not followed)"),
    "symlink-broken": (Severity.WARNING, "a symbolic link points at nothing"),
    "name-not-utf8": (Severity.WARNING, "a file or folder name is not valid UTF-8; memtui leaves it out of the tree, skills and search (backups keep it)"),
    "temp-file-leftover": (Severity.WARNING, "a temporary file an interrupted memtui write left behind (it holds no data of its own)"),
    "node-no-owner": (Severity.WARNING, "no owner is set for a node or any of its parents"),
    "config-invalid": (Severity.ERROR, "memtui.toml cannot be used as written"),
    "no-root-index": (Severity.INFO, "the memory tree has no root AGENTS.md"),
    "no-memory-folder": (Severity.INFO, "the workspace has no memory/ folder; the folder itself is read as the memory tree"),
    "bom": (Severity.INFO, "a file starts with a UTF-8 byte order mark"),
    "crlf": (Severity.INFO, "a file uses CRLF line ends"),
    "skill-no-front-matter": (Severity.ERROR, "SKILL.md has no front matter: name and description are missing"),
    "skill-no-name": (Severity.ERROR, "SKILL.md front matter has no `name`"),
    "skill-no-description": (Severity.ERROR, "SKILL.md front matter has no `description`"),
    "skill-bad-field-type": (Severity.ERROR, "a SKILL.md field has the wrong type"),
    "skill-duplicate-key": (Severity.WARNING, "a SKILL.md front matter key is given twice"),
    "skill-name-invalid": (Severity.ERROR, "a skill name breaks the Agent Skills naming rules"),
    "skill-name-upload-pattern": (Severity.ERROR, "a skill name breaks the platform's upload pattern for skill names"),
    "skill-name-mismatch": (Severity.ERROR, "a skill's name differs from its folder name (the Agent Skills reference validator rejects it)"),
    "skill-name-reserved": (Severity.ERROR, "a skill uses the reserved name `shared-content`"),
    "skill-description-length": (Severity.ERROR, "a skill description is over 1024 characters (the reference validator rejects it)"),
    "skill-unknown-key": (Severity.ERROR, "SKILL.md front matter has a key outside the Agent Skills set (the reference validator rejects it)"),
    "skill-compatibility-length": (Severity.ERROR, "a skill's `compatibility` is over 500 characters (the reference validator rejects it)"),
    "skill-description-vague": (Severity.INFO, "a skill description names no situation (\"Use when …\")"),
    "skill-nested": (Severity.INFO, "a SKILL.md lies inside another skill's folder"),
    "skill-shadowed": (Severity.INFO, "a workspace skill is shadowed by the administrator's copy"),
    "skill-scope-overridden": (Severity.INFO, "a shared skill is overridden by the same name in a later publication scope"),
    "skill-cascade-mismatch": (Severity.WARNING, "shared-skills/ is not the flattening of the scopes in shared-skills.d/"),
    "skill-name-duplicate": (Severity.WARNING, "two skills that are both offered to an agent share a name"),
    "store-damaged": (Severity.ERROR, "memtui's store (.memtui/store.json) cannot be read; it is kept as it is and opened read-only"),
    "workspace-read-only": (Severity.INFO, "the workspace is open read-only (another memtui holds the writer lock, or .memtui cannot be written)"),
    "search-index-damaged": (Severity.WARNING, "the search index could not be read and was rebuilt from the files"),
    "search-file-skipped": (Severity.WARNING, "a file or line could not be indexed for search"),
    "notes-lines-glued": (Severity.WARNING, "a notes line holds two entries: a line appended to a file without a final newline joined the line before it"),
    "graph-line-malformed": (Severity.ERROR, "a graph.jsonl line is not one JSON object (cut off, two records, an array, not UTF-8); kept as written"),
    "graph-record-invalid": (Severity.ERROR, "a graph.jsonl record misses a field or has a field of the wrong type; kept as written"),
    "graph-record-unknown": (Severity.INFO, "a graph.jsonl line has an unknown record type; kept (the MCP server drops it on its next write)"),
    "graph-legacy-layout": (Severity.WARNING, "the graph file is in the legacy single-object layout the MCP server reads as empty"),
    "graph-server-unreadable": (Severity.ERROR, "the MCP memory server cannot read the graph file (a BOM or a bad line makes every tool call fail)"),
    "graph-duplicate-entity": (Severity.WARNING, "two or more graph records have the same entity name"),
    "graph-similar-names": (Severity.WARNING, "entity names equal after case and whitespace folding"),
    "graph-unicode-twins": (Severity.WARNING, "entity names that look the same but differ in code points (equal after NFC normalisation)"),
    "graph-self-relation": (Severity.WARNING, "a relation from an entity to itself"),
    "graph-near-duplicate": (Severity.INFO, "entity names that are nearly identical (fuzzy match)"),
    "graph-dangling-relation": (Severity.WARNING, "a relation's end is not an entity of the graph"),
    "graph-orphan": (Severity.INFO, "an entity with no relation (an entity is created together with its relation)"),
    "graph-type-variants": (Severity.WARNING, "one entityType spelled several ways (Person / person / people)"),
    "graph-duplicate-observation": (Severity.WARNING, "an entity holds the same observation more than once"),
    "graph-empty-observation": (Severity.WARNING, "an entity holds an empty observation"),
    "graph-name-control": (Severity.WARNING, "an entity name holds control, zero-width or direction characters"),
    "graph-name-empty": (Severity.WARNING, "an entity has an empty name"),
    "graph-remote-cached": (Severity.INFO, "the remote graph was not read now (offline, or it could not be read): its findings are from its last read kept, as of the time said"),
    "graph-remote-unread": (Severity.WARNING, "the remote graph could not be read and no earlier read is kept: its findings are missing from the audit"),
    "graph-duplicate-relation": (Severity.INFO, "the same relation (from, to, relationType) is written more than once"),
    "unrecorded-edit": (Severity.WARNING, "an article's bytes differ from its active version (edited outside governance)"),
    "active-missing": (Severity.ERROR, "an article has an active version but its file is missing"),
    "untracked": (Severity.INFO, "articles in a node are not recorded as versions yet (adopt them as a baseline)"),
    "eval-set-unreadable": (Severity.ERROR, "a node's eval set cannot be read (too large, not UTF-8, unreadable)"),
    "eval-set-bad-line": (Severity.ERROR, "a line of an eval set is not a case (not JSON, or no id or ticket)"),
    "eval-case-duplicate": (Severity.ERROR, "two cases of an eval set share an id (the repeat is left out)"),
    "eval-case-unknown-id": (Severity.ERROR, "an eval case names an entry id that no article of the memory has"),
    "eval-case-no-language": (Severity.WARNING, "an eval case says no language (its figures are not counted per language)"),
    "eval-set-untracked": (Severity.WARNING, "a node's eval set is not a governed version (its changes are not recorded)"),
    "governance-pending": (Severity.WARNING, "a governance change was interrupted; memtui completes it on the next write"),
    "proposal-inbox-invalid": (Severity.WARNING, "a file in proposals/inbox/ cannot be filed as a proposal; it stays there"),
    "backup-skipped": (Severity.WARNING, "a workspace entry is not in the backup tree (a symbolic link, a .git folder, a special file)"),
    "restore-refused": (Severity.ERROR, "a backup entry would land outside the restore folder or is not a plain file (.., absolute path, symlink, .git); not written"),
    "restore-mismatch": (Severity.ERROR, "a restored file differs from its MANIFEST line, or a MANIFEST file is missing from the backup"),
    # secrets and personal data
    "secret": (Severity.ERROR, "a text holds what looks like a secret (token, key, password); shown masked"),
    "pii-email": (Severity.WARNING, "the memory tree holds an e-mail address (the memory keeps no personal data)"),
    "pii-phone": (Severity.WARNING, "the memory tree holds a phone number (the memory keeps no personal data)"),
    "pii-egn": (Severity.WARNING, "the memory tree holds a valid Bulgarian personal number (ЕГН)"),
    "pii-iban": (Severity.WARNING, "the memory tree holds a valid IBAN"),
    "pii-card": (Severity.WARNING, "the memory tree holds a valid payment card number"),
    "saga-person-key": (Severity.WARNING, "a saga entry carries a person key instead of the object's keyed hash"),
    "article-diary": (Severity.INFO, "an article body holds dates or session references (an article is a guide, not a diary)"),
    # the past-case index and the tree
    "experience-field-missing": (Severity.WARNING, "an experience entry lacks a field of the past-case entry shape"),
    "experience-fix-shape": (Severity.WARNING, "an experience entry's fix shape is not data fix, config cell, code or answer"),
    "link-broken": (Severity.WARNING, "a relative link points at a file that does not exist"),
    "anchor-broken": (Severity.WARNING, "a link's #anchor names no heading of its target"),
    "folder-no-index": (Severity.WARNING, "a folder of the memory tree holds articles but no AGENTS.md"),
    "node-unlisted": (Severity.WARNING, "a node is not listed in its parent's index"),
    "node-owner-same": (Severity.WARNING, "a node's own owner is its parent's owner (a node exists because a distinct profile owns it)"),
    "routing-without-graph": (Severity.WARNING, "MEMORY_ROUTING.md is present but the workspace has no graph (it sends the agent to tools it does not have)"),
    "operator-file-missing": (Severity.INFO, "CONTEXT_RECOVERY.md or FILE_DELIVERY.md is missing"),
    "skill-stricter": (Severity.INFO, "memtui reads a SKILL.md field more strictly than the Agent Skills reference validator"),
    # session histories
    "session-line-malformed": (Severity.WARNING, "a session history line is not one JSON object; kept as written"),
    "session-rewritten": (Severity.ERROR, "a session history shrank or its earlier lines changed since memtui last saw it (a history only ever grows)"),
    "session-claim-unbacked": (Severity.WARNING, "a turn says a graph write happened but the graph lacks the entity (an agent never claims a save it did not make)"),
    # the tamper-evident audit log and the promotion rule per node
    "promotion-review-required": (Severity.INFO, "a node requires human review instead of two independent uses to promote a proposal (its `promotion:` setting)"),
    "audit-log-broken": (Severity.ERROR, "the audit log's hash chain is broken: an entry was changed, removed or cut off its end outside memtui"),
    # skills governed like articles
    "skill-manifest-missing": (Severity.WARNING, "a skill has no skill-manifest.json beside SKILL.md, so it cannot be published"),
    "skill-manifest-unreadable": (Severity.ERROR, "skill-manifest.json cannot be read as a JSON object (not JSON, not UTF-8, too large or too deeply nested)"),
    "skill-manifest-part-missing": (Severity.ERROR, "the skill manifest does not state a part a published skill needs (one of the five parts, dry-run, a teardown, the coverage map, the tests)"),
    "skill-manifest-invalid": (Severity.ERROR, "a skill manifest field has the wrong type or shape"),
    "skill-unbound": (Severity.WARNING, "a skill is bound to no node of the memory tree, so it has no owner"),
    "skill-binding-invalid": (Severity.ERROR, "a skill names a memory node that does not exist"),
    "skill-unrecorded-edit": (Severity.WARNING, "a governed skill's folder differs from its published version (changed outside governance)"),
    "skill-content-unusable": (Severity.ERROR, "a skill folder cannot be kept as a version (a symbolic link, a file that is not UTF-8, too large)"),
    "skill-gate-without-eval-set": (Severity.ERROR, "a skill's manifest gates it on the eval set of a node that holds none, so no amended version of it can be published"),
}


#: Where the rule behind a finding code is written (the project's seeds), for scripts and
#: ``memtui audit --codes``; a finding carries it in ``reference`` (``--json``), and the TUI
#: never shows it: the sentences of :data:`CODES` and of each finding read whole without it.
REFERENCES: dict[str, str] = {
    "secret": "seed 000 §2 rules 2 and 5",
    "pii-email": "seed 000 §5",
    "pii-phone": "seed 000 §5",
    "pii-egn": "seed 000 §5",
    "pii-iban": "seed 000 §5",
    "pii-card": "seed 000 §5",
    "saga-person-key": "seed 000 §7.3",
    "article-diary": "seed 000 §2 rule 2",
    "experience-field-missing": "seed 000 §5 entry shape",
    "experience-fix-shape": "seed 000 §5",
    "folder-no-index": "seed 000 §1",
    "node-unlisted": "seed 000 §2 rule 4",
    "node-owner-same": "seed 000 §2 rule 4",
    "node-no-owner": "seed 000 §7.4b",
    "routing-without-graph": "seed 002",
    "operator-file-missing": "seed 002",
    "skill-no-description": "seed 002",
    "skill-description-vague": "seed 002",
    "skill-name-upload-pattern": "seed 002",
    "skill-name-reserved": "seed 002",
    "skill-nested": "seed 002",
    "skill-shadowed": "seed 002",
    "skill-scope-overridden": "seed 002",
    "skill-cascade-mismatch": "seed 002",
    "graph-orphan": "seed 002",
    "session-line-malformed": "seed 002",
    "session-rewritten": "seed 002",
    "session-claim-unbacked": "seed 002",
    "audit-log-broken": "seed 000 §4 rule 7, §7.4b",
    "promotion-review-required": "seed 000 §7.4b",
    "skill-manifest-missing": "seed 000 Part II §10",
    "skill-manifest-part-missing": "seed 000 Part II §10",
    "skill-unbound": "seed 000 Part II §10",
    "skill-gate-without-eval-set": "seed 000 Part II §10, §7.4b",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in a workspace.

    Attributes:
        severity: error, warning or info.
        code: a key of :data:`CODES` (stable; scripts may match on it).
        path: the file or folder concerned, relative to the workspace, with ``/`` separators.
        line: 1-based line number, or ``None`` when the finding concerns a whole file.
        message: what is wrong, in plain words (user text inside is quoted, never markup).
        fix: what to do about it.
        column: 1-based column where the parser gives one, else ``None``.
        fingerprint: for a found value (secrets, personal data), a short hash of it
            (:func:`memtui.core.scan.secrets.fingerprint`): what ``memtui audit allow``
            records; never the value itself.
        reference: where the rule broken is written (``"seed 000 §5"``), for ``--json``
            and scripts; never part of ``message`` or ``fix``, never shown by the TUI.
    """

    severity: Severity
    code: str
    path: str
    line: int | None
    message: str
    fix: str = ""
    column: int | None = field(default=None)
    fingerprint: str | None = field(default=None)
    reference: str | None = field(default=None)

    @classmethod
    def make(cls, code: str, path: str, message: str, fix: str = "", line: int | None = None,
             column: int | None = None, severity: Severity | None = None,
             fingerprint: str | None = None, reference: str | None = None) -> "Finding":
        """Build a finding whose severity defaults to the one registered for ``code``, and
        whose reference defaults to the code's in :data:`REFERENCES`.

        Raises:
            KeyError: ``code`` is not in :data:`CODES` (a programming error, caught by tests).
        """
        default = CODES[code][0]
        return cls(severity or default, code, path, line, message, fix, column, fingerprint,
                   reference if reference is not None else REFERENCES.get(code))

    @property
    def place(self) -> str:
        """``path:line`` (or ``path`` alone), the form editors and terminals recognise."""
        if self.line is None:
            return self.path
        if self.column is None:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.line}:{self.column}"

    def summary(self) -> str:
        """One line for people: ``severity: place: message``."""
        return f"{self.severity.value}: {self.place}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"severity", "code", "path", "line", "column", "message", "fix"}``,
        plus ``"fingerprint"`` and ``"reference"`` when the finding has them."""
        data = asdict(self)
        data["severity"] = self.severity.value
        for key in ("fingerprint", "reference"):
            if data[key] is None:
                del data[key]
        return data


def sort_key(finding: Finding) -> tuple[int, str, int, str]:
    """Order findings by severity, then path, then line, then code."""
    return (finding.severity.rank, finding.path, finding.line or 0, finding.code)
