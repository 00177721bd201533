"""Reading JSON that memtui did not write (DESIGN.md invariant 10).

Every reader of JSON in ``memtui.core`` (graph lines, session histories, the store, the search
and audit caches, backups) goes through :func:`loads` or :func:`decode`, so one rule decides
what JSON memtui accepts:

- **nesting is bounded** (:data:`MAX_DEPTH` levels of arrays and objects). Python's JSON
  decoder, and every function that walks a value afterwards (serialising it again, making it
  JSON-safe, comparing it), recurses once per level: a line nested a thousand levels deep
  raised ``RecursionError`` in the audit, the index, the search, every graph command and the
  TUI's start. Real records nest a few levels; the bound leaves room for any of them and
  stays far under the interpreter's recursion limit at any call depth;
- messages are phrases to follow a subject ("line 3 is nested 1,000 levels deep ...");
- **NaN and Infinity are refused**: JSON has no such numbers (RFC 8259 §6), the MCP memory
  server cannot read them, and memtui could not write them back (``allow_nan=False``);
- numbers over Python's 4,300-digit limit, and every other decoding error, are a
  :class:`JSONError` (a ``json.JSONDecodeError``) with a phrase saying why, never another
  exception.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Deepest nesting of arrays and objects memtui reads (levels).
MAX_DEPTH = 100

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class JSONError(json.JSONDecodeError):
    """The text is not JSON memtui reads; ``str(exc)`` (and ``exc.msg``) says why in plain words.

    A ``json.JSONDecodeError`` (so a ``ValueError``): a handler of either catches it.

    Attributes:
        pos: the character offset where the problem is (0 when unknown).
        depth: the nesting depth reached, for a value nested too deep (else 0).
    """

    def __init__(self, message: str, doc: str = "", pos: int = 0, depth: int = 0) -> None:
        super().__init__(message, doc, pos)
        self.args = (message,)
        self.depth = depth

    def __str__(self) -> str:
        return self.msg


def nesting(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text`` (brackets inside strings do not
    count; an unterminated string is read as if it ended the text)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:  # the common case, at C speed
        return min(MAX_DEPTH, text.count("[") + text.count("{"))
    bare = _STRING.sub("", text)
    cut = bare.find('"')
    if cut >= 0:
        bare = bare[:cut]
    depth = deepest = 0
    for match in _BRACKET.finditer(bare):
        if match.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest


def _refuse_constant(name: str) -> Any:
    raise JSONError(f"holds {name}, which is not a JSON number (JSON has no NaN or Infinity)")


_STRICT = json.JSONDecoder(parse_constant=_refuse_constant)
_LENIENT = json.JSONDecoder()


def _depth(value: Any) -> int:
    """How deep arrays and objects nest in the decoded ``value`` (``0`` for a scalar), counted
    without recursion and only until it passes :data:`MAX_DEPTH`."""
    if type(value) is not dict and type(value) is not list:
        return 0
    deepest = 1
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > deepest:
            deepest = level
            if deepest > MAX_DEPTH:
                break
        for child in (item.values() if type(item) is dict else item):
            if type(child) is dict or type(child) is list:
                stack.append((child, level + 1))
    return deepest


def _failed(exc: Exception, text: str, pos: int) -> JSONError | json.JSONDecodeError:
    """The error for a decoding failure ``exc`` of ``text`` (read from ``pos``): nested too deep
    when it is (raised: that sentence comes first, as when the bound was checked before
    decoding), else the syntax error itself, else a value that cannot be read (4,300-digit
    integers, the decoder's own recursion guard)."""
    _check_depth(text)  # raises JSONError when too deep
    if isinstance(exc, json.JSONDecodeError):
        return exc
    return JSONError(f"holds a value that cannot be read ({exc})", text, pos)


def _too_deep(text: str) -> None:
    """Raise the :class:`JSONError` of ``text``, whose value nests deeper than :data:`MAX_DEPTH`."""
    _check_depth(text)
    raise JSONError(f"is nested more than {MAX_DEPTH} levels deep (memtui reads JSON nested at most {MAX_DEPTH} "
                    "levels)", text, 0, depth=MAX_DEPTH + 1)


def _check_depth(text: str) -> None:
    depth = nesting(text)
    if depth > MAX_DEPTH:
        raise JSONError(f"is nested {depth:,} levels deep (memtui reads JSON nested at most {MAX_DEPTH} levels)",
                        text, 0, depth=depth)


def decode(text: str, pos: int = 0, *, allow_nan: bool = False) -> tuple[Any, int]:
    """Decode one JSON value starting at ``pos`` of ``text`` (``json.JSONDecoder.raw_decode``).

    ``allow_nan`` accepts NaN and Infinity (only for memtui's own files, which Python's
    ``json`` may have written with them: the store, backups).

    Returns:
        ``(value, end)``: the value and the offset just after it.

    Raises:
        JSONError: not JSON, nested deeper than :data:`MAX_DEPTH`, NaN/Infinity, a number
            too long to read (a ``json.JSONDecodeError`` is also a ``ValueError``; its
            ``pos`` and ``msg`` are kept).
    """
    try:
        value, end = (_LENIENT if allow_nan else _STRICT).raw_decode(text, pos)
    except JSONError:
        raise
    except (ValueError, RecursionError) as exc:
        error = _failed(exc, text if pos == 0 else text[pos:], pos)
        if error is exc:
            raise
        raise error from exc
    if _depth(value) > MAX_DEPTH:
        _too_deep(text[pos:end])
    return value, end


def loads(data: str | bytes, *, allow_nan: bool = False) -> Any:
    """Parse a whole JSON document (``json.loads`` with the rules of this module).

    Args:
        data: the text, or UTF-8 bytes.
        allow_nan: accept NaN and Infinity (see :func:`decode`).

    Raises:
        JSONError: see :func:`decode`; also not UTF-8. ``json.JSONDecodeError`` (a
            ``ValueError``) for a syntax error, with line and column.
    """
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONError(f"is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                            pos=exc.start) from exc
    else:
        text = data
    try:
        value = (_LENIENT if allow_nan else _STRICT).decode(text)
    except JSONError:
        raise
    except (ValueError, RecursionError) as exc:
        error = _failed(exc, text, 0)
        if error is exc:
            raise
        raise error from exc
    if _depth(value) > MAX_DEPTH:
        _too_deep(text)
    return value
