"""YAML front matter, tolerant of what real files contain.

Why not ``python-frontmatter``: it misses front matter behind a UTF-8 byte order mark
(bug input B18, checked with 1.3.0), loses line numbers (findings need them) and keeps the
last of two duplicate keys without a word (B19). This module does only the splitting and
leaves YAML to PyYAML (its C loader when present).

Rules (DESIGN.md §2, issue 2):
- a file has front matter when its first line, after an optional BOM, is ``---``;
- the block ends at the next line that is exactly ``---`` (or ``...``); later ``---`` lines
  belong to the body;
- CRLF and LF are both accepted; tabs inside the block are a YAML error with a line number;
- dates, numbers and booleans stay typed (``datetime.date``, ``int``, ``bool``);
  :func:`json_safe` turns them into JSON values.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

#: PyYAML's C-accelerated safe loader when built with libyaml, else the pure-Python one.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_FENCE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")


_TOP_KEY = re.compile(r"^([^\s#:'\"\-\[{][^:]*?|'[^']*'|\"[^\"]*\"):(?:[ \t]|$)")


def _duplicate_top_keys(block: str) -> list[tuple[str, int]]:
    """``(key, block line)`` for each top-level key written a second time (lexical check:
    PyYAML silently keeps the last value, B19)."""
    seen: set[str] = set()
    out: list[tuple[str, int]] = []
    for number, line in enumerate(block.split("\n"), 1):
        match = _TOP_KEY.match(line)
        if not match:
            continue
        key = match.group(1).strip().strip("'\"")
        if key in seen:
            out.append((key, number))
        seen.add(key)
    return out


@dataclass(slots=True)
class FrontMatter:
    """The result of :func:`split`.

    Attributes:
        meta: the parsed mapping (empty when absent or broken).
        body: the text after the closing fence (the whole text when there is no front matter),
            without the BOM; line ends are kept as they were.
        body_line: 1-based line number of the body's first line in the file.
        present: the file opens with a ``---`` fence.
        closed: the block has a closing fence.
        error: a plain-words description of why the block could not be used, or ``None``.
        error_line: 1-based file line of the error, when known.
        error_column: 1-based column of the error, when known.
        duplicate_keys: ``(key, file line)`` for every key given twice (the last value is used).
        bom: the text started with U+FEFF.
        crlf: the text uses CRLF line ends.
        raw: the front matter block as written (between the fences), for display.
    """

    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1
    present: bool = False
    closed: bool = False
    error: str | None = None
    error_line: int | None = None
    error_column: int | None = None
    duplicate_keys: list[tuple[str, int]] = field(default_factory=list)
    bom: bool = False
    crlf: bool = False
    raw: str = ""


def _plain_yaml_error(exc: yaml.YAMLError, block: str) -> tuple[str, int | None, int | None]:
    """Turn a PyYAML error into (message, line within block, column), in plain words."""
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    problem = str(getattr(exc, "problem", "") or exc)
    lines = block.split("\n")
    text = lines[line - 1] if line and line <= len(lines) else ""
    if "\t" in text or "found character '\\t'" in problem:
        return "tab used for indentation (YAML allows only spaces)", line, column
    if "mapping values are not allowed" in problem:
        key = text.split(":", 1)[0].strip() or "a value"
        return (f"{key} contains ': ' — put the text in quotes", line, column)
    return f"YAML cannot be parsed: {problem}", line, column


def split(text: str) -> FrontMatter:
    """Split ``text`` into front matter and body, never raising.

    Args:
        text: the whole file as decoded text (a leading BOM is allowed).

    Returns:
        A :class:`FrontMatter`; problems are reported in its ``error`` fields and
        ``duplicate_keys``, not raised.
    """
    result = FrontMatter()
    if text.startswith("\ufeff"):
        result.bom = True
        text = text[1:]
    result.crlf = "\r\n" in text
    first_end = text.find("\n")
    first = text if first_end == -1 else text[:first_end]
    if first.rstrip("\r").rstrip() != "---":
        result.body = text
        return result
    result.present = True
    # scan line by line for the closing fence, without splitting the (possibly long) body
    pos = len(text) if first_end == -1 else first_end + 1
    number = 2
    end_pos = None
    while pos < len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl == -1 else nl
        if _FENCE.match(text[pos:line_end].rstrip("\r")):
            end_pos = (line_end, len(text) if nl == -1 else nl + 1)
            break
        pos = line_end + 1
        number += 1
    if end_pos is None:
        result.error = "front matter is never closed (no second `---` line)"
        result.error_line = 1
        result.body = text
        return result
    result.closed = True
    block = text[first_end + 1:pos].replace("\r\n", "\n")
    result.raw = block
    result.body = text[end_pos[1]:]
    result.body_line = number + 1
    if not block.strip():
        return result
    try:
        data = yaml.load(block, Loader=_Loader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        message, line, column = _plain_yaml_error(exc, block)
        result.error = message
        result.error_line = (line + 1) if line else 1
        result.error_column = column
        return result
    result.duplicate_keys = [(k, ln + 1) for k, ln in _duplicate_top_keys(block)]
    if data is None:
        return result
    if not isinstance(data, dict):
        result.error = f"front matter is a {type(data).__name__}, expected keys and values"
        result.error_line = 2
        return result
    result.meta = {str(k): v for k, v in data.items()}
    return result


def json_safe(value: Any) -> Any:
    """Return ``value`` with dates, times and other non-JSON scalars made JSON-safe.

    Dates and datetimes become ISO 8601 strings; sets and tuples become lists; mapping keys
    become strings; anything else unknown becomes ``str(value)``. Used wherever front
    matter reaches JSON (``--json`` output, the store): bug input B03.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
