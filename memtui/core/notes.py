"""Member notes: load, save without losing anyone's update, diff (seed 002; invariants 3, 4).

``memory/MEMORY_CUSTOM.md`` is the member's file: the member edits it between any two turns,
the proxy writes it on their behalf, and memtui edits it too. An absent file is an empty
document, not an error; saving creates it (seed 002).

No lost update (DESIGN.md §4 invariant 3): :func:`load` remembers the SHA-256 of the bytes it
read (:attr:`Note.hash`, ``None`` for an absent file). :func:`save` is given the hash the new
text was based on; when the file on disk no longer has it, nothing is written and
:class:`~memtui.core.errors.ConflictError` carries the current bytes. The caller then offers
the three choices: **reload** (:func:`load` again), **show the difference**
(:func:`diff`), or **keep mine** (:func:`keep_mine`: save again based on the bytes now on
disk, i.e. overwrite knowingly). A BOM and CRLF line ends are kept as loaded.

Only the member notes are written. The notebook ``MEMORY.md`` (the agent's) and the operator
files (``CONTEXT_RECOVERY.md``, ``FILE_DELIVERY.md``, ``MEMORY_ROUTING.md``, mounted
read-only by the proxy) load with a read-only reason and :func:`save` refuses them.

Confinement (invariant 4): a member-notes file that is a symlink pointing outside the
workspace is neither read nor written: it loads empty with a ``symlink-outside`` finding and
a read-only reason.

Merging: when the file changed since the text was based on it, :func:`save`
three-way merges (:func:`merge`, the ``merge3`` library) the bytes both sides started from
(``base_text``: what the editor loaded, or the copy the store keeps of memtui's last save,
:data:`SEEN_TABLE`), the new text and the file now. Changes that do not overlap are applied
and saved; overlapping ones raise :class:`MergeConflict`, which carries the hunks to resolve
line by line (:meth:`Merged.resolve`). Without a base hash, ``notes set`` is based on what
memtui last saw: the bytes of the last ``notes.set`` (:func:`last_seen`), so an agent's edit
made since is merged, never replaced in silence.

A base memtui never saved is found among the copies it keeps of the versions it showed
(:func:`memtui.core.shown.keep`, in the user cache folder), so ``notes show --hash`` → edit → ``notes set
--base-hash H`` merges an agent's append made meanwhile. With no copy of the base, the text is
saved only when it removes no line now on disk; otherwise :class:`LinesWouldBeLost` names
those lines, and only an explicit "keep mine" removes them.

Every save ends the file with a line end, so an agent's next ``echo >>`` starts a new line.

Size: a note is read whole up to :data:`NOTES_MAX_BYTES`; a larger one loads
read-only (only its first part is shown), so it can never be saved cut short.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import merge3

from memtui.core import atomic
from memtui.core import shown as shown_copies
from memtui.core.auditlog import AuditEntry
from memtui.core.errors import ConfinementError, ConflictError, ReadOnlyError
from memtui.core.files import confine
from memtui.core.findings import Finding
from memtui.core.session import UNCHECKED
from memtui.core.text import BOM as _BOM, final_newline, removed_lines, unified_diff
from memtui.core.workspace import MEMBER_NOTES, NOTEBOOK, OPERATOR_FILES, Workspace

#: A note is read whole up to this size (bytes); a larger one is shown read-only.
NOTES_MAX_BYTES = 64 * 1024 * 1024
#: ``base_hash`` of :func:`save` meaning "whatever the file holds when the write happens"
#: (a knowing replace; ``memtui notes set`` without a base hash uses :data:`LAST_SEEN`).
CURRENT = UNCHECKED
#: The audit action of a save.
ACTION = "notes.set"
#: The store table keeping the bytes of memtui's last save of each notes file (one record per
#: path: ``path``, ``hash``, ``text``), the base of the next merge when no other is known.
SEEN_TABLE = "notes_seen"
#: A save larger than this (bytes) keeps no copy in the store (the store stays small); a later
#: conflict on it is then refused rather than merged.
SEEN_MAX_BYTES = 1024 * 1024
#: ``base_hash`` of :func:`save` meaning "the file as memtui last saw it" (:func:`last_seen`,
#: read under the write's lock): ``memtui notes set`` without ``--base-hash``. An edit made
#: since by an agent is merged in, or refused when it overlaps, never replaced in silence.
#: When memtui never saved the file there is no edit "since": the file as it is.
LAST_SEEN = object()
#: ``--file`` words for :func:`resolve`.
CHOICES = ("custom", "notebook", *OPERATOR_FILES)
#: Where a notes line holds the start of a second entry right after text, with no space between:
#: what an agent's ``echo >>`` leaves when the file did not end with a line end (the member's
#: last line, then the agent's). An entry start that Markdown never places mid-line: a date
#: (``2026-12-02``) right after a letter or a sentence's end; a list item (``- ``) or heading
#: (``## ``) right after a sentence's end, a colon or a table's last ``|``; ``## ``…``###### ``
#: right after a word; ``- `` + a capital, digit or ``[`` right after a lowercase word; ``# ``
#: + a capital after a lowercase word. Left out because prose and code use them mid-line:
#: ``* ``/``+ `` (``color.* namespace``), anything after a backtick or a quote (code spans),
#: a date after ``:``/``"`` (``gte:2024-01-01``), a suspended hyphen (``over- or under-``).
#: Measured: no line of the 290 corpus files (26,920 lines outside code fences) nor of
#: 215,894 other lines (triage corpus, sample workspace, seeds, /usr/share/doc) matches; 76 %
#: of corpus lines glued to eight typical agent entries do.
GLUED_ENTRY = re.compile(
    r"(?<=[A-Za-z.!?)|*])\d{4}-\d{2}-\d{2}(?![\d-])"
    r"|(?<=[.!?:|])(?:#{1,6}|-) (?=\S)"
    r"|(?<=[)\"'])- (?=\S)"
    r"|(?<=[A-Za-z0-9*])#{2,6} (?=\S)"
    r"|(?<=[a-z*])(?:# (?=[A-Z])|- (?=[A-Z0-9\[*`_]))")


def resolve(ws: Workspace, which: str = "custom") -> tuple[Path, str | None]:
    """The path of a notes file and why memtui will not write it.

    Args:
        which: ``"custom"`` (member notes), ``"notebook"`` (``MEMORY.md``), or an operator
            file's name (``CONTEXT_RECOVERY.md``; the ``.md`` may be left out).

    Returns:
        ``(path, read_only_reason)``; the reason is ``None`` for the member notes (the
        notebook and the operator files are never written: seed 002).

    Raises:
        ValueError: ``which`` names no notes file.
    """
    if which in ("custom", MEMBER_NOTES):
        return ws.member_notes, None
    if which in ("notebook", NOTEBOOK):
        return ws.notebook, (f"{NOTEBOOK} is the agent's own notebook; memtui shows it "
                             "read-only (members edit MEMORY_CUSTOM.md).")
    name = which if which.endswith(".md") else which + ".md"
    if name in OPERATOR_FILES:
        return ws.memory / name, (f"{name} is an operator file, mounted read-only in the agent's "
                                  "workspace; memtui never writes it.")
    raise ValueError(f"{which!r} is not a notes file; use one of: {', '.join(CHOICES)}.")


def encode(text: str, *, bom: bool = False, crlf: bool = False) -> bytes:
    """The bytes of ``text`` as a notes file: UTF-8, with a BOM and CRLF line ends if asked.

    With ``crlf``, every line end (``\\n`` or ``\\r\\n``) becomes ``\\r\\n``.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if crlf:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    data = text.encode("utf-8")
    return _BOM + data if bom else data


@dataclass(slots=True)
class Note:
    """A notes file as loaded.

    Attributes:
        which: the :func:`resolve` word (``"custom"``, ``"notebook"``, operator file name).
        path: absolute path (confined; symlinks not resolved).
        shown: the path relative to the workspace (``memory/MEMORY_CUSTOM.md``).
        exists: the file existed when loaded (absent = empty document).
        data: the bytes loaded (``b""`` when absent or refused).
        text: the text to edit: no BOM, and ``\\n`` line ends when the file used CRLF
            throughout (:attr:`crlf`); a file mixing line ends keeps them as they are.
        hash: SHA-256 hex of :attr:`data`, ``None`` when absent: the base of the next save.
        bom: the file starts with a UTF-8 BOM (kept on save).
        crlf: every line end is CRLF (kept on save).
        truncated: only the first :data:`NOTES_MAX_BYTES` were read (then read-only).
        read_only_reason: why memtui will not save this file, or ``None``.
        findings: problems met (``symlink-outside``, ``not-utf8``, ``file-too-large``, …).
    """

    which: str
    path: Path
    shown: str
    exists: bool = False
    data: bytes = b""
    text: str = ""
    hash: str | None = None
    bom: bool = False
    crlf: bool = False
    truncated: bool = False
    read_only_reason: str | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def writable(self) -> bool:
        """True when :func:`save` may write this file (the session aside)."""
        return self.read_only_reason is None

    def encode(self, text: str) -> bytes:
        """``text`` as bytes with this file's BOM and line ends (see :func:`encode`)."""
        return encode(text, bom=self.bom, crlf=self.crlf)

    def dirty(self, text: str) -> bool:
        """True when saving ``text`` would change the file's bytes (a save adds the final line
        end :func:`save` adds, so text lacking only that is not a change)."""
        data = self.encode(text)
        return data != self.data and final_newline(data) != self.data


def _decode(note: Note, data: bytes) -> Note:
    note.data = data
    note.hash = atomic.sha256(data) if note.exists else None
    if b"\x00" in data[:8192]:
        note.read_only_reason = f"{note.shown} is a binary file (it contains NUL bytes); memtui will not edit it."
        note.findings.append(Finding.make("not-utf8", note.shown, "is a binary file (it contains NUL bytes), not text",
                                          "move binary files out of the memory tree"))
        return note
    note.bom = data.startswith(_BOM)
    body = data[3:] if note.bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if note.truncated and exc.start >= len(body) - 4:
            text = body[: exc.start].decode("utf-8")
        else:
            line = body[: exc.start].count(b"\n") + 1
            note.read_only_reason = (f"{note.shown} is not valid UTF-8 (byte 0x{body[exc.start]:02x} at "
                                     f"offset {exc.start}); memtui will not edit it, so no byte is changed.")
            note.findings.append(Finding.make(
                "not-utf8", note.shown,
                f"is not valid UTF-8 (byte 0x{body[exc.start]:02x} at offset {exc.start})",
                "re-save the file as UTF-8", line=line))
            return note
    lf = body.count(b"\n")
    note.crlf = lf > 0 and body.count(b"\r\n") == lf
    note.text = text.replace("\r\n", "\n") if note.crlf else text
    return note


def load(ws: Workspace, which: str = "custom", *, limit: int = NOTES_MAX_BYTES) -> Note:
    """Load a notes file; never raises for a bad file (problems become findings).

    Args:
        ws: the workspace.
        which: see :func:`resolve`.
        limit: read at most this many bytes whole (default :data:`NOTES_MAX_BYTES`).

    Returns:
        A :class:`Note`. An absent file is an empty, writable document (``exists=False``,
        ``hash=None``). A symlink pointing outside the workspace gives an empty, read-only
        note with a ``symlink-outside`` finding; a file over ``limit`` gives its first part,
        read-only, with ``file-too-large``; a binary or non-UTF-8 file is read-only with
        ``not-utf8``.

    Raises:
        ValueError: ``which`` names no notes file.
    """
    path, reason = resolve(ws, which)
    shown = ws.shown(path)
    note = Note(which, path, shown, read_only_reason=reason)
    try:
        confine(ws.root, shown)
    except ConfinementError as exc:
        note.read_only_reason = str(exc)
        note.findings.append(Finding.make(
            "symlink-outside", shown, f"points outside the workspace, to {os.path.realpath(path)}; "
            "memtui neither reads nor writes it", "replace the link with the file itself"))
        return note
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        return note
    except OSError as exc:
        note.read_only_reason = f"{shown} cannot be read ({exc.strerror or exc}); memtui will not write it."
        note.findings.append(Finding.make("file-unreadable", shown, f"cannot be read: {exc.strerror or exc}",
                                          "check that you may read the file"))
        return note
    note.exists = True
    if len(data) > limit:
        size = os.path.getsize(path)
        note.truncated = True
        note.read_only_reason = (f"{shown} is {size:,} bytes, over memtui's {limit:,}-byte limit for editing; "
                                 "only its first part is shown, read-only, so it is never saved cut short.")
        note.findings.append(Finding.make("file-too-large", shown,
                                          f"{size:,} bytes, over the {limit:,}-byte editing limit",
                                          "split the file"))
        _decode(note, data[:limit])
        note.hash = None
        return note
    _decode(note, data)
    if note.which in ("custom", MEMBER_NOTES, "notebook", NOTEBOOK) and note.text:
        note.findings.extend(glued_findings(shown, note.text))
    if note.which in ("custom", MEMBER_NOTES) and note.writable:
        shown_copies.keep(ws, note.shown, note.data)
    return note


def glued_lines(text: str) -> list[tuple[int, int]]:
    """``(line, column)`` (1-based) of each line of ``text`` holding a second entry glued to
    the first (:data:`GLUED_ENTRY`), the column where it starts; lines in fenced code blocks
    are left out."""
    out: list[tuple[int, int]] = []
    fence = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence:
            continue
        indent = len(line) - len(stripped)
        found = next((m.start() for m in GLUED_ENTRY.finditer(line) if m.start() > indent), None)
        if found is not None:
            out.append((number, found + 1))
    return out


def glued_findings(shown: str, text: str) -> list[Finding]:
    """``notes-lines-glued`` findings for the notes file ``shown`` (see :func:`glued_lines`)."""
    out = []
    for line, column in glued_lines(text):
        out.append(Finding.make(
            "notes-lines-glued", shown,
            f"line {line} holds two entries: the second starts at column {column}, right after the "
            "first; a line was appended to the file when it did not end with a line end",
            "put a line break before the second entry (memtui's own saves end the file with one)",
            line=line, column=column))
    return out


def read_current(path: Path) -> tuple[bytes | None, str | None]:
    """The bytes now at ``path`` and their SHA-256 hex; ``(None, None)`` when absent."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return None, None
    return data, atomic.sha256(data)


def signature(path: Path) -> tuple[int, int, int] | None:
    """``(mtime_ns, size, inode)`` of ``path`` for cheap change polling; ``None`` if absent.

    A change of signature means "read and compare the hash", not "changed": the hash decides.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@dataclass(frozen=True, slots=True)
class SaveResult:
    """What :func:`save` did.

    Attributes:
        note: the note as it now is on disk (base of the next save).
        before: SHA-256 hex of the bytes replaced (``None``: the file was absent).
        after: SHA-256 hex of the bytes now on disk.
        written: the file was written now (``False``: nothing changed, or a retry).
        entry: the audit entry of this write (or of the earlier write a retry repeats).
        retried: the client id had already recorded this very write (seed 004).
        merged: the file had changed since the base and the change was merged in.
    """

    note: Note
    before: str | None
    after: str
    written: bool
    entry: AuditEntry | None
    retried: bool = False
    merged: bool = False


def _short(h: str | None) -> str:
    return "absent" if h is None else h[:12]


# -- three-way merge ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Hunk:
    """One stretch of a three-way merge.

    Attributes:
        base, mine, theirs: the lines (each with its line end) of the common base, of the new
            text and of the file on disk over this stretch.
        conflict: both sides changed the same base lines differently; otherwise :attr:`merged`
            is the stretch's result.
    """

    base: tuple[str, ...]
    mine: tuple[str, ...]
    theirs: tuple[str, ...]
    conflict: bool = False

    @property
    def merged(self) -> tuple[str, ...]:
        """The lines this stretch contributes when it is not a conflict."""
        return self.mine if self.mine != self.base else self.theirs


#: How a conflict hunk is resolved: keep the new text's lines, the file's, or both (file first).
CHOICES_OF_CONFLICT = ("mine", "theirs", "both")


@dataclass(frozen=True, slots=True)
class Merged:
    """The result of :func:`merge`: hunks in file order."""

    hunks: tuple[Hunk, ...]

    @property
    def conflicts(self) -> list[int]:
        """Indexes (into :attr:`hunks`) of the conflict hunks."""
        return [i for i, h in enumerate(self.hunks) if h.conflict]

    @property
    def clean(self) -> bool:
        """No conflict: :meth:`resolve` needs no choice."""
        return not self.conflicts

    def resolve(self, choices: Mapping[int, str] | None = None) -> str:
        """The merged text, each conflict hunk ``i`` resolved by ``choices[i]`` (one of
        :data:`CHOICES_OF_CONFLICT`).

        Raises:
            ValueError: a conflict has no choice, or an unknown one.
        """
        choices = choices or {}
        out: list[str] = []
        for i, hunk in enumerate(self.hunks):
            if not hunk.conflict:
                out.extend(hunk.merged)
                continue
            choice = choices.get(i)
            if choice == "mine":
                out.extend(hunk.mine)
            elif choice == "theirs":
                out.extend(hunk.theirs)
            elif choice == "both":
                out.extend(_joinable(hunk.theirs) + list(hunk.mine))
            else:
                raise ValueError(f"conflict {self.conflicts.index(i) + 1} has no choice "
                                 f"({', '.join(CHOICES_OF_CONFLICT)}); got {choice!r}")
        return "".join(out)

    def with_markers(self, mine_label: str = "yours", theirs_label: str = "on disk") -> str:
        """The text with git-style conflict markers around each conflict (for the CLI)."""
        out: list[str] = []
        for hunk in self.hunks:
            if not hunk.conflict:
                out.extend(hunk.merged)
                continue
            out.append(f"<<<<<<< {mine_label}\n")
            out.extend(_joinable(hunk.mine))
            out.append("=======\n")
            out.extend(_joinable(hunk.theirs))
            out.append(f">>>>>>> {theirs_label}\n")
        return "".join(out)


def _joinable(lines: Sequence[str]) -> list[str]:
    """``lines`` with a line end on the last one, so another line can follow it."""
    out = list(lines)
    if out and not out[-1].endswith(("\n", "\r")):
        out[-1] += "\n"
    return out


def _common_start(one: Sequence[str], other: Sequence[str]) -> int:
    """How many lines ``one`` and ``other`` start with alike (line ends aside): both sides of a
    merge may hold the same appended line (the member's copy was taken after an agent's
    append, and the agent appended again), which must come out once."""
    n = 0
    for x, y in zip(one, other, strict=False):
        if x.rstrip("\r\n") != y.rstrip("\r\n"):
            break
        n += 1
    return n


def _beside(base: Sequence[str], changed: Sequence[str], added: Sequence[str]) -> list[str] | None:
    """One side's stretch when the other only *added* lines right before or after the base
    lines it changed: ``added`` is ``base`` with lines after (an agent's append after the line
    the member edited) or before it. Then the change and the additions are both kept, the
    additions on their side of it; ``None`` when ``added`` is not such a stretch."""
    n = len(base)
    if len(added) <= n:
        return None
    if list(added[:n]) == list(base):
        return _joinable(changed) + list(added[n:]) if changed else list(added[n:])
    if list(added[-n:]) == list(base):
        return _joinable(added[:-n]) + list(changed)
    return None


def merge(base: str, mine: str, theirs: str) -> Merged:
    """Three-way merge of notes texts by lines (the ``merge3`` library, bzr/breezy's merge).

    Changes to different lines are combined. When both sides only *added* lines at the same
    place (two appends at the end of the file, the common case for notes), both additions are
    kept, the file's first (git's ``union`` rule for that case): no line of either is lost.
    When one side only added lines right after (or before) lines the other side changed (an
    agent's ``echo >>`` after the line the member edited last), both are kept, the added
    lines on their side (:func:`_beside`). Both sides changing the same base lines
    differently is a conflict hunk.

    Args:
        base: the text both sides started from.
        mine: the new text (the member's).
        theirs: the text now on disk (the agent's, or another process's).

    Returns:
        A :class:`Merged`; ``.clean`` says whether it resolves without a choice.
    """
    m = merge3.Merge3(base.splitlines(True), mine.splitlines(True), theirs.splitlines(True))
    hunks: list[Hunk] = []
    for group in m.merge_groups():
        kind = group[0]
        if kind == "conflict":
            b, a, t = group[1], group[2], group[3]  # type: ignore[misc]
            if not b:  # additions only, at one place: keep both, a line both added once
                same = _common_start(t, a)
                hunks.append(Hunk((), (), tuple(_joinable(t) + list(a[same:]))))
            elif (joined := _beside(b, a, t)) is not None or (joined := _beside(b, t, a)) is not None:
                hunks.append(Hunk((), (), tuple(joined)))
            else:
                hunks.append(Hunk(tuple(b), tuple(a), tuple(t), conflict=True))
        else:
            lines = tuple(group[1])
            if kind == "a":
                hunks.append(Hunk((), lines, ()))
            elif kind == "b":
                hunks.append(Hunk((), (), lines))
            else:  # unchanged, same
                hunks.append(Hunk(lines, lines, lines))
    return Merged(tuple(hunks))


class LinesWouldBeLost(ConflictError):
    """The file changed since the text was based on it, memtui has no copy of that base to
    merge from, and saving the text would remove lines now on disk. Nothing was written.

    Attributes (besides :class:`ConflictError`'s): ``lost``, those lines (no line ends), in
    the file's order. Saving them away takes an explicit choice (:func:`keep_mine`, the CLI's
    ``--keep-mine``), never a retry with the current hash suggested by memtui.
    """

    def __init__(self, message: str, lost: Sequence[str], **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.lost = list(lost)


class MergeConflict(ConflictError):
    """The file changed since the text was based on it and the changes overlap.

    Nothing was written. Attributes (besides :class:`ConflictError`'s): ``merged`` (the
    :class:`Merged` to resolve; save :meth:`Merged.resolve` based on ``current_hash``),
    ``base_hash``.
    """

    def __init__(self, message: str, merged: Merged, *, base_hash: object, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.merged = merged
        self.base_hash = base_hash


def last_seen(session, shown: str) -> tuple[str | None, str | None] | None:  # noqa: ANN001 - Session
    """What memtui last saw of the notes file ``shown``: ``(hash, text)`` of its last save
    (``text`` ``None`` when the file was too big to keep a copy), or ``None`` when memtui never
    saved it. Read from the store's :data:`SEEN_TABLE` (falls back to the last ``notes.set``
    audit entry's ``after`` hash, without bytes, for saves made before the table existed)."""
    for record in session.store.table(SEEN_TABLE).all():
        if record.get("path") == shown:
            return record.get("hash"), record.get("text")
    for entry in session.audit.entries():  # newest first
        if entry.action == ACTION and entry.target == shown:
            return entry.after, None
    return None


def _seen_text(session, shown: str, base_hash: object) -> str | bytes | None:  # noqa: ANN001
    """The text (or bytes) of the version ``base_hash`` of ``shown``: memtui's last save, or a
    copy of a version it showed (:func:`memtui.core.shown.copy`); ``None`` when it has neither."""
    seen = last_seen(session, shown)
    if seen is not None and seen[0] == base_hash and seen[1] is not None:
        return seen[1]
    return shown_copies.copy(session.ws, shown, base_hash)


def base_text(session, note: Note, base_hash: str | None) -> str | None:  # noqa: ANN001 - Session
    """The editor text of the version ``base_hash`` of ``note`` — what an edit started from —
    for a three-way merge: the loaded text when it is that version, else memtui's last save or
    a kept copy of a version it showed; ``None`` when memtui has none (then no merge may be
    offered: merging from the wrong base drops the other writer's lines).
    """
    if base_hash is None or base_hash == note.hash:
        return note.text
    known = _seen_text(session, note.shown, base_hash)
    return None if known is None else text_of(note, known)


def text_of(note: Note, data: bytes | str | None) -> str:
    """``data`` (bytes on disk, or their text) as editor text in ``note``'s terms: no BOM, and
    ``\n`` line ends when ``note`` uses CRLF; ``""`` for ``None`` (an absent file)."""
    if not data:
        return ""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = text[1:] if text.startswith("\ufeff") else text
    return text.replace("\r\n", "\n") if note.crlf else text


def save(session, note: Note, text: str, base_hash: str | None, *,  # noqa: ANN001 - Session
         client_id: str | None = None, base_text: str | None = None, merge_changes: bool = True) -> SaveResult:
    """Write ``text`` to ``note``'s file if it still holds the bytes ``base_hash`` names.

    The write goes through :meth:`memtui.core.session.Session.write` (lock for this write
    alone, lost-update check, confinement, client id, atomic write, audit entry).

    Args:
        session: a :class:`memtui.core.session.Session`.
        note: the loaded note (gives the path, BOM and line ends).
        text: the complete new text.
        base_hash: SHA-256 hex of the bytes ``text`` was based on (``note.hash`` usually;
            ``None`` = the file was absent; :data:`CURRENT` = replace whatever is there;
            :data:`LAST_SEEN` = the file as memtui last saved it).
        client_id: the request's id. When it already recorded a ``notes.set`` of this file
            to the same bytes, this is a retry: nothing is written or recorded again and the
            earlier entry is returned (seed 004), whatever the file holds now.
        base_text: the text ``base_hash`` names (what the editor loaded); default: the copy
            kept of memtui's last save when its hash is ``base_hash``.
        merge_changes: when the file no longer has ``base_hash`` and the base text is known,
            three-way merge (:func:`merge`) and save the result if clean; when it is not
            known, save only if no line now on disk would be lost.

    The bytes written end with a line end (:func:`memtui.core.text.final_newline`), unless
    ``text`` is what the file holds already.

    Returns:
        A :class:`SaveResult` (``merged`` True when a change made meanwhile was merged in).
        Saving text equal to the bytes on disk writes and records nothing.

    Raises:
        ReadOnlyError: the session is read-only, or the file is one memtui never writes
            (notebook, operator file, too large, not UTF-8).
        ConfinementError: the file is (now) a symlink leading outside the workspace.
        MergeConflict: the file changed since ``base_hash`` and the changes overlap; nothing
            was written; ``exc.merged`` holds the hunks to resolve.
        LinesWouldBeLost: the file on disk no longer has ``base_hash``, memtui has no copy of
            that base, and ``text`` would remove lines now on disk (``exc.lost``); nothing was
            written. (Without such lines, ``text`` is saved over the file.)
        ConflictError: the file on disk no longer has ``base_hash`` and ``merge_changes`` is
            False; nothing was written;
            ``exc.current``/``exc.current_hash`` hold what is there now.
        ClientIdConflict: ``client_id`` was used before for another request.
    """
    session.require_writable()
    if note.read_only_reason is not None:
        raise ReadOnlyError(note.read_only_reason, reference="seed 002")
    confine(session.ws.root, note.shown)
    typed = note.encode(text)
    new = final_newline(typed)  # an agent's next `echo >>` starts a line of its own
    after = atomic.sha256(new)
    outcome: dict[str, Any] = {"data": new, "merged": False}

    def change(tx) -> None:  # noqa: ANN001 - Tx
        data = new
        base: object = base_hash
        known: str | bytes | None = base_text
        if base is LAST_SEEN:  # the store is read fresh under the lock: another memtui's save counts
            seen = last_seen(session, note.shown)
            base, known = (CURRENT, None) if seen is None else seen
            if known is None and base is not CURRENT:
                known = shown_copies.copy(session.ws, note.shown, base)
        elif known is None and base is not CURRENT:
            known = _seen_text(session, note.shown, base)
        current = tx.read(note.shown)
        current_hash = None if current is None else atomic.sha256(current)
        if current is not None and typed == current and base in (current_hash, CURRENT):
            data = current  # the text on disk already: nothing to write (not even a line end)
        if base is not CURRENT and current_hash != base and merge_changes:
            disk = text_of(note, current)
            if known is None:  # no base to merge from: saved only when no line on disk is lost
                lost = removed_lines(disk, text)
                if lost:
                    raise LinesWouldBeLost(
                        f"{note.shown} changed on disk since your text was based on it (based on "
                        f"{_short(base) if isinstance(base, str) else 'absent'}, now {_short(current_hash)}), "
                        "and memtui has no copy of that base to merge from; nothing was written.",
                        lost, path=note.path, current=current, current_hash=current_hash)
                tx.replace(note.shown, data, base=current_hash)
                tx.detail["unmerged_base"] = True
            else:
                merged = merge(text_of(note, known), text, disk)
                if not merged.clean:
                    count = len(merged.conflicts)
                    raise MergeConflict(
                        f"{note.shown} changed on disk since your text was based on it, and {count} "
                        f"{'change overlaps' if count == 1 else 'changes overlap'} with yours; nothing was written.",
                        merged, base_hash=base, path=note.path, current=current,
                        current_hash=current_hash)
                resolved = note.encode(merged.resolve())
                data = current if resolved == current else final_newline(resolved)
                outcome["merged"] = True
                tx.replace(note.shown, data, base=current_hash)
                tx.detail["merged"] = True
        else:
            tx.replace(note.shown, data, base=base)
        outcome["data"] = data
        tx.detail["bytes"] = len(data)
        if tx.changed:
            _remember(tx, note.shown, data)

    done = session.write(ACTION, note.shown, change, client_id=client_id, request={"after": after})
    entry = done.entry
    data = outcome["data"]
    if done.retried:
        return SaveResult(_loaded(note, new), entry.before if entry else None, after, False, entry, retried=True)
    before = entry.before if entry is not None else (None if base_hash in (CURRENT, LAST_SEEN) else base_hash)
    return SaveResult(_loaded(note, data), before, atomic.sha256(data), done.written, entry,
                      merged=outcome["merged"])


def _remember(tx, shown: str, data: bytes) -> None:  # noqa: ANN001 - Tx
    """Keep the bytes just saved as :data:`SEEN_TABLE`'s record for ``shown`` (in this write),
    and as a copy of a version memtui knows (:func:`memtui.core.shown.keep`)."""
    shown_copies.keep(tx.session.ws, shown, data)
    table = tx.table(SEEN_TABLE)
    record = {"path": shown, "hash": atomic.sha256(data),
              "text": data.decode("utf-8") if len(data) <= SEEN_MAX_BYTES else None}
    ids = [r.doc_id for r in table.all() if r.get("path") == shown]
    if ids:
        table.update(record, doc_ids=ids[:1])
        if len(ids) > 1:
            table.remove(doc_ids=ids[1:])
    else:
        table.insert(record)


def _loaded(note: Note, data: bytes) -> Note:
    fresh = replace(note, exists=True, findings=list(note.findings))
    return _decode(fresh, data)


def keep_mine(session, note: Note, text: str, conflict: ConflictError, *,  # noqa: ANN001
              client_id: str | None = None) -> SaveResult:
    """The "keep mine" choice: save ``text`` over what is on disk now, knowingly.

    Based on ``conflict.current_hash`` (the bytes the user was shown), so a *further* change
    made meanwhile is again a :class:`ConflictError`. The BOM and line ends of ``note`` are
    kept. Raises as :func:`save`.
    """
    return save(session, note, text, conflict.current_hash, client_id=client_id)


def diff(old: str, new: str, old_label: str = "on disk", new_label: str = "yours",
         context: int = 3) -> str:
    """A unified diff of two notes texts (:func:`memtui.core.text.unified_diff`, line ends
    normalised); ``""`` when they are equal."""
    return unified_diff(old, new, old_label, new_label, context=context)


def conflict_diff(note: Note, conflict: ConflictError, mine: str) -> str:
    """The "show the difference" choice: what is on disk now → ``mine``, as a unified diff."""
    current = conflict.current or b""
    if current.startswith(_BOM):
        current = current[3:]
    disk = current.decode("utf-8", "replace")
    return diff(disk, mine, f"{note.shown} (on disk now)", f"{note.shown} (yours)")
