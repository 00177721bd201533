"""Plain text shared by every layer: showing user text safely, and diffs (no Textual, no Rich).

One place for each rule (DESIGN.md §3):

- :func:`visible` makes control, zero-width, direction and surrogate characters visible, so a
  name never breaks a one-line output and two different names never look the same, and
  cuts a value longer than :data:`SHOWN_CHARS` (:func:`cut`);
- :func:`unified_diff` is the one unified diff (notes, graph, articles, backup verify) and
  :func:`side_by_side` the one two-column diff;
- :data:`BOM` is the UTF-8 byte order mark every reader and writer keeps as it found it;
- :func:`final_newline` ends a text file memtui writes with a line end, so another writer's
  ``echo >>`` starts a line of its own;
- :func:`mask_url` hides the credentials of URLs in any text memtui shows, and
  :func:`shown_url` is how an endpoint is shown.
"""

from __future__ import annotations

import codecs
import difflib
import json
import re
import unicodedata
from typing import TextIO, cast

#: The UTF-8 byte order mark (kept on save wherever a file had it).
BOM = b"\xef\xbb\xbf"

#: How :func:`visible` shows the commonest invisible characters, per style.
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_SYMBOLS = {"\n": "⏎", "\r": "␍", "\t": "⇥"}


#: Characters of one user value a command prints or a screen shows before the rest is cut
#: (8: a 16 MiB observation took 22 s and 1 GB to show); where a whole
#: value matters there is a way to ask for it ("show all", ``graph export``).
SHOWN_CHARS = 4096


def final_newline(data: bytes) -> bytes:
    """``data`` (a text file's bytes as memtui is about to write them) ending with a line end:
    unchanged when empty or already ending with one; else ``\r\n`` appended when the file's
    lines end with CRLF, ``\n`` otherwise.

    A text file memtui writes ends with a line end, because agents append to the same files
    with ``echo >>`` (member notes, ``graph.jsonl``): without one, the next appended line is
    glued to memtui's last line. Every writer of a text file calls this on the bytes it writes
    (never on bytes it only reads: a file another program wrote is read and kept as it is).
    """
    if not data or data.endswith((b"\n", b"\r")):
        return data
    return data + (b"\r\n" if b"\r\n" in data else b"\n")


def cut(text: str, limit: int | None = SHOWN_CHARS) -> str:
    """``text``, or its first ``limit`` characters and ``… [N more characters]``."""
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]} … [{len(text) - limit:,} more characters]"


#: Characters of one string value in ``--json`` output before the rest is cut (data for
#: scripts: far more than a person reads, far less than a runaway value).
JSON_VALUE_CHARS = 1024 * 1024


def cut_values(value: object, limit: int = JSON_VALUE_CHARS) -> object:
    """A JSON-like ``value`` (dicts, lists, strings, numbers) with every string longer than
    ``limit`` :func:`cut` (keys included); everything else as it is."""
    if isinstance(value, str):
        return cut(value, limit)
    if isinstance(value, dict):
        return {cut(str(k), limit): cut_values(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [cut_values(v, limit) for v in value]
    return value


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(value: object, *, indent: int | None = 2) -> str:
    """``value`` (JSON-safe) as JSON text that is valid UTF-8: non-ASCII written as itself, a
    lone surrogate (a byte of a file name that is not UTF-8) as its ``\\udcXX`` escape, which
    JSON readers turn back into the same string."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def well_formed(text: str) -> str:
    """``text`` with every lone surrogate (``U+D800``–``U+DFFF``, which JSON's ``\\udXXX``
    escapes and PEP 383 file-name bytes put into a ``str``) replaced by ``U+FFFD``, so it can be
    encoded as UTF-8; any other text is returned as it is (the same object).

    The rule for strings memtui reads (graph lines, session histories, the store, front matter,
    ``config.json``): the value is kept as read, so a record written back keeps its bytes, and
    a door that must have valid text makes it so at that door: the search index and its queries
    with this function, the terminal with :func:`visible` (``⟨U+D800⟩``), ``--json`` output with
    :func:`json_text` (the ``\\ud800`` escape).
    """
    if not _LONE_SURROGATE.search(text):
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


#: The codec error handler that writes a character an output stream cannot encode as
#: :func:`visible` shows it (``\\ud800``, ``\\xff`` for a PEP 383 byte): see :func:`guard_stream`.
VISIBLE_ERRORS = "memtui-visible"


def _visible_errors(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return visible(exc.object[exc.start:exc.end], limit=None), exc.end


codecs.register_error(VISIBLE_ERRORS, _visible_errors)


def guard_stream(stream: object) -> None:
    """Make the text stream ``stream`` (``sys.stdout``, ``sys.stderr``) write a character it
    cannot encode (a lone surrogate from a JSON escape or a non-UTF-8 name) as :func:`visible`
    shows it, instead of raising ``UnicodeEncodeError`` in the middle of a command's output.
    A stream that cannot be reconfigured is left as it is."""
    try:
        stream.reconfigure(errors=VISIBLE_ERRORS)  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        pass


#: Characters that must never reach a terminal as they are: C0 controls but TAB and LF (ESC
#: starts every escape sequence), DEL, C1 controls (0x9B is an 8-bit CSI), the bidirectional
#: embeddings, overrides, isolates and marks (U+202A-202E, U+2066-2069, U+200E/F, U+061C:
#: text that reads in another order than it is stored) and lone surrogates (not text).
#: The character class of :data:`TERMINAL_UNSAFE` but CR (an editor keeps the CR of a CRLF).
UNSAFE_BUT_CR = ("\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                 "\u2066-\u2069\ud800-\udfff")
TERMINAL_UNSAFE = re.compile(f"[\r{UNSAFE_BUT_CR}]")


def shown_text(text: str) -> str:
    """A multi-line ``text`` (an article, notes, a history turn) as it may reach a terminal:
    line ends (LF, CRLF read as LF) and tabs are kept, every :data:`TERMINAL_UNSAFE` character
    is shown as :func:`visible` shows it in the TUI (``⟨U+001B⟩``, ``␍``); the rest unchanged.
    For display only: the text written back is always the original."""
    if not TERMINAL_UNSAFE.search(text):
        return text
    text = text.replace("\r\n", "\n")
    return TERMINAL_UNSAFE.sub(lambda m: visible(m.group(), symbols=True, limit=None), text)


class TerminalStream:
    """A text stream in front of a terminal that shows every :data:`TERMINAL_UNSAFE` character
    of what a command prints as :func:`visible` does (``\\u001b``), line ends and tabs kept:
    ``memtui notes show`` of a file holding ``ESC ] 0;…`` on a terminal must not retitle it.
    Only for a stream that is a terminal (:meth:`wrap`): output to a pipe or a file is the
    command's data, byte for byte. Everything else (``buffer``, ``flush``) is the stream's own.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    @classmethod
    def wrap(cls, stream: TextIO) -> TextIO:
        """``stream`` behind a :class:`TerminalStream` when it is a terminal, else ``stream``."""
        try:
            terminal = stream.isatty()
        except (AttributeError, ValueError, OSError):
            terminal = False
        return cast(TextIO, cls(stream)) if terminal and not isinstance(stream, cls) else stream

    def write(self, text: str) -> int:
        self._stream.write(_TERMINAL_OUT.sub(lambda m: visible(m.group(), limit=None), text))
        return len(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


#: What :class:`TerminalStream` shows: :data:`TERMINAL_UNSAFE`, but the CR of a CRLF (harmless).
_TERMINAL_OUT = re.compile(f"\r(?!\n)|[{UNSAFE_BUT_CR}]")


def visible(value: object, *, symbols: bool = False, limit: int | None = SHOWN_CHARS) -> str:
    """``str(value)`` with invisible characters shown (``None`` gives ``""``), cut to ``limit``.

    Args:
        value: any value; its ``str()`` is shown.
        symbols: ``False`` (the CLI's style): ``\\n``, ``\\t``, ``\\r`` and ``\\u200b``-style
            escapes; ``True`` (the TUI's style): ``⏎``, ``⇥``, ``␍`` and ``⟨U+200B⟩``.
        limit: characters of the value shown before :func:`cut` cuts the rest (``None``: all).

    Returns:
        The text with every character of the Unicode categories Cc, Cf, Zl, Zp and Cs (control,
        format such as zero-width and direction marks, line/paragraph separators, and the lone
        surrogates of a non-UTF-8 file name) replaced; printable text is returned unchanged.
        A byte of a file name that is not UTF-8 (``U+DC80``–``U+DCFF``, PEP 383) is shown as
        that byte, ``\xe5`` (``⟨0xE5⟩``).
    """
    text = "" if value is None else str(value)
    if limit is not None and len(text) > limit:  # cut first: showing 16 MiB to keep 4 KiB costs seconds
        return f"{visible(text[:limit], symbols=symbols, limit=None)} … [{len(text) - limit:,} more characters]"
    if text.isprintable():
        return text
    table = _SYMBOLS if symbols else _ESCAPES
    out = []
    for char in text:
        if char in table:
            out.append(table[char])
        elif "\udc80" <= char <= "\udcff":  # a byte of a name that is not UTF-8 (PEP 383)
            out.append(f"⟨0x{ord(char) - 0xDC00:02X}⟩" if symbols else f"\\x{ord(char) - 0xDC00:02x}")
        elif unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            out.append(f"⟨U+{ord(char):04X}⟩" if symbols else f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


def visible_lines(text: str) -> str:
    """A multi-line ``text`` (a diff) for a terminal: each line :func:`visible` in full (control
    and format characters inside it shown, never cut), the lines themselves kept as lines; every
    line ends with ``\n``."""
    return "".join(visible(line, limit=None) + "\n" for line in text.splitlines())


def _lines(value: str | bytes, normalise_eol: bool) -> list[str]:
    text = value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value
    if text.startswith("\ufeff"):
        text = text[1:]
    if normalise_eol:
        text = text.replace("\r\n", "\n")
    return text.splitlines(keepends=True)


def unified_diff(old: str | bytes, new: str | bytes, old_label: str = "before",
                 new_label: str = "after", *, context: int = 3, limit: int | None = None,
                 normalise_eol: bool = True) -> str:
    """The unified diff of two texts (``difflib``); ``""`` when they are equal.

    Args:
        old, new: the texts, or bytes (decoded as UTF-8, bad bytes shown as ``\\xNN``); a
            leading BOM is not part of the comparison.
        old_label, new_label: the ``---``/``+++`` file labels.
        context: lines of context around each change.
        limit: at most this many diff lines, then one ``… N more diff lines`` line.
        normalise_eol: compare with CRLF line ends read as LF (a file's line ends are kept
            by its writer, so they are rarely the change a user wants to see). When it is
            ``False`` and only the line ends differ, one line says so.

    Returns:
        Diff text in which every line ends with ``\\n``; a last line without one is followed
        by ``\\ No newline at end of file`` as ``diff`` prints it.
    """
    a, b = _lines(old, normalise_eol), _lines(new, normalise_eol)
    out: list[str] = []
    for line in difflib.unified_diff(a, b, old_label, new_label, n=context):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    if not out and a != b:  # the same lines but for their ends
        out = [f"--- {old_label}\n", f"+++ {new_label}\n", "line ends differ (CRLF/LF)\n"]
    if limit is not None and len(out) > limit:
        out = out[:limit] + [f"… {len(out) - limit} more diff lines\n"]
    return "".join(out)


def side_by_side(old: str, new: str) -> list[tuple[str, str, str]]:
    """Aligned rows ``(tag, left, right)`` for a two-column diff of two texts.

    ``tag`` is ``equal``, ``replace``, ``delete`` or ``insert`` (``difflib.SequenceMatcher``
    opcodes, no autojunk); a missing side of a row is ``""``. CRLF is read as LF.
    """
    a = old.replace("\r\n", "\n").splitlines()
    b = new.replace("\r\n", "\n").splitlines()
    rows: list[tuple[str, str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        left, right = a[i1:i2], b[j1:j2]
        for k in range(max(len(left), len(right))):
            rows.append((tag, left[k] if k < len(left) else "", right[k] if k < len(right) else ""))
    return rows


def removed_lines(old: str, new: str) -> list[str]:
    """The lines of ``old`` that ``new`` does not keep (``difflib`` opcodes, no autojunk; CRLF
    read as LF), in ``old``'s order, without their line ends: what replacing ``old`` by
    ``new`` loses (a confirmation's "will be lost" list)."""
    a = old.replace("\r\n", "\n").splitlines()
    b = new.replace("\r\n", "\n").splitlines()
    lost: list[str] = []
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("delete", "replace"):
            lost.extend(a[i1:i2])
    return lost


def clip(text: str, width: int) -> str:
    """``text`` on one line (runs of white space made one space, made :func:`visible`), cut to
    ``width`` characters with a final ``…`` when longer."""
    text = visible(" ".join(text.split()))
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^/?#@\s'\"<>]+)@")
_URL_SECRET_PARAM = re.compile(
    r"(?P<key>[?&;](?:[A-Za-z0-9_.-]*(?:token|secret|passw(?:or)?d|pwd|api[_-]?key|apikey|auth|signature|sig|"
    r"credential|session)[A-Za-z0-9_.-]*)=)(?P<value>[^&#\s'\"<>]+)", re.IGNORECASE)


def mask_url(text: str) -> str:
    """``text`` with the credentials of every URL in it masked: the password
    of ``user:password@`` (``user:***@``), a bare user part of an ``http``/``https`` URL
    (``https://***@host``: what a token pasted into a remote looks like), and the values of
    query parameters named like secrets (``?access_token=***``). Usernames of other schemes
    (``ssh://git@host``) stay, since they are no secret. The one rule for every URL memtui
    prints, logs or stores in a message."""
    if "://" not in text:
        return text

    def info(match: re.Match[str]) -> str:
        scheme, part = match.group("scheme"), match.group("info")
        user, colon, _password = part.partition(":")
        if colon:
            return f"{scheme}{user}:***@"
        if scheme.lower().rstrip(":/") in ("http", "https"):
            return f"{scheme}***@"
        return match.group(0)

    text = _URL_USERINFO.sub(info, text)
    return _URL_SECRET_PARAM.sub(lambda m: f"{m.group('key')}***", text)


def shown_url(url: str) -> str:
    """``url`` as memtui shows an endpoint it talks to: without user information, query and
    fragment (they may hold credentials). :func:`mask_url` is the rule for URLs inside any
    other text (git's messages, a remote's address), where it masks them in place."""
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "(an invalid URL)"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host + (f":{port}" if port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def plural(count: int, word: str, many: str | None = None) -> str:
    """``"1 article"``, ``"2 articles"`` (``many`` for irregular plurals), with thousands
    separators."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"
