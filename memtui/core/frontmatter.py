"""YAML front matter, tolerant of what real files contain.

Why not ``python-frontmatter``: it misses front matter behind a UTF-8 byte order mark
(checked with 1.3.0), loses line numbers (findings need them) and keeps the
last of two duplicate keys without a word. This module does only the splitting and
leaves YAML to PyYAML (its C loader when present).

Rules (DESIGN.md §2):
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

from memtui.core.findings import Finding

#: PyYAML's C-accelerated safe loader when built with libyaml, else the pure-Python one.
_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Most values a front matter block may expand to, each use of an alias counted again
#: (nine aliases of nine aliases in a 1.4 kB SKILL.md expand to 387 million
#: values, and every consumer that walks them printed 1.68 GB). Real front matter holds tens.
MAX_VALUES = 10_000


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """The safe loader, with every value that cannot be built (an impossible date such as
    ``2024-13-45``, ``!!int abc``, a 5,000-digit number) a YAML error at the value's place
    instead of a ``ValueError`` from deep inside PyYAML."""

    def construct_object(self, node, deep=False):  # noqa: ANN001, ANN201 - PyYAML's signature
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, _unbuildable(node, exc), node.start_mark) from exc


def _unbuildable(node: yaml.Node, exc: Exception) -> str:
    """Why the value of ``node`` cannot be built, in plain words."""
    value = node.value if isinstance(node, yaml.ScalarNode) else ""
    shown = value if len(value) <= 40 else value[:39] + "…"
    if node.tag.endswith(":timestamp"):
        return (f"{shown} is not a real date or time ({exc}); write a real one (YYYY-MM-DD), or put it "
                "in quotes to keep it as text")
    kind = node.tag.rsplit(":", 1)[-1]
    return f"{shown or 'a value'} cannot be read as {kind} ({exc}); put it in quotes to keep it as text"


def _expansion_problem(root: yaml.Node) -> tuple[str, yaml.Node] | None:
    """``(problem, node)`` when the aliases of the block loop or expand it past
    :data:`MAX_VALUES` values, else ``None`` (a walk of the composed nodes, each shared node
    sized once)."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            children = _children(node)
            sizes[key] = min(MAX_VALUES + 1, 1 + sum(sizes[id(c)] for c in children))
            if sizes[key] > MAX_VALUES:
                return (f"its aliases expand it to more than {MAX_VALUES:,} values (an alias bomb); "
                        "write the values out instead of repeating aliases", node)
            continue
        if key in sizes:
            continue
        if key in on_path:
            return "an alias refers to a value that holds it (a loop); write the value out", node
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                return "an alias refers to a value that holds it (a loop); write the value out", child
            if id(child) not in sizes:
                stack.append((child, False))
    return None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _load(block: str) -> tuple[yaml.Node | None, Any]:
    """Compose and build ``block`` as :func:`yaml.load` does, with the expansion bound.

    Raises:
        yaml.YAMLError: the block is not YAML, cannot be built, or expands too far.
    """
    loader = _Loader(block)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        # without an alias no node is shared, and a block makes at most three nodes a character
        # (``?`` alone is a mapping, its key and its value): a short one cannot reach the bound
        problem = _expansion_problem(node) if "*" in block or 3 * len(block) + 1 > MAX_VALUES else None
        if problem is not None:
            raise yaml.composer.ComposerError(None, None, problem[0], problem[1].start_mark)
        return node, loader.construct_document(node)
    finally:
        loader.dispose()

_FENCE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")


_TOP_KEY = re.compile(r"^([^\s#:'\"\-\[{][^:]*?|'[^']*'|\"[^\"]*\"):(?:[ \t]|$)")


def _duplicate_top_keys(block: str) -> list[tuple[str, int]]:
    """``(key, block line)`` for each top-level key written a second time (lexical check:
    PyYAML silently keeps the last value)."""
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
        node: the block as composed YAML (a ``yaml.MappingNode``; ``None`` when absent or
            broken), for readers that need how a value was written (skills).
        second_block_line: 1-based file line of a second front matter block right after the
            first (``---``, keys and values, ``---``), read as body text;
            ``None`` when there is none.
        second_block_keys: the top-level keys of that second block.
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
    node: Any = None
    second_block_line: int | None = None
    second_block_keys: list[str] = field(default_factory=list)

    def second_block_message(self) -> str:
        """The sentence for a second block (call only when :attr:`second_block_line` is set)."""
        keys = ", ".join(self.second_block_keys[:5]) + (" …" if len(self.second_block_keys) > 5 else "")
        first = "an empty first block" if not self.meta else f"the first block ({', '.join(list(self.meta)[:5])})"
        return (f"a second front matter block starts at line {self.second_block_line} ({keys}); only "
                f"{first} is read as front matter, and the second is read as body text")

    def second_block_finding(self, shown: str) -> Finding | None:
        """The ``front-matter-second-block`` finding of the file ``shown``, or ``None``."""
        if self.second_block_line is None:
            return None
        return Finding.make("front-matter-second-block", shown, self.second_block_message(), SECOND_BLOCK_FIX,
                            line=self.second_block_line)


SECOND_BLOCK_FIX = "merge the two `---` blocks into one (keep the keys of both), then save"


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
        A :class:`FrontMatter`; problems are reported in its ``error`` fields,
        ``duplicate_keys`` and ``second_block_*``, not raised.
    """
    result = _split(text)
    if result.closed and not result.error:
        _second_block(result)
    return result


def _split(text: str) -> FrontMatter:
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
        node, data = _load(block)
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
    result.node = node
    return result


def _second_block(result: FrontMatter) -> None:
    """Set ``second_block_*`` when the body opens (after blank lines) with another block of
    keys and values between ``---`` lines. A body that opens with a thematic break (``---``)
    followed by prose is not one: the lines up to the next fence must be a YAML mapping."""
    body = result.body
    pos, skipped = 0, 0
    while True:
        nl = body.find("\n", pos)
        line = body[pos:] if nl == -1 else body[pos:nl]
        if line.strip() or nl == -1:
            break
        pos, skipped = nl + 1, skipped + 1
    if line.rstrip("\r").rstrip() == "---" and nl != -1:
        inner = _split(body[pos:])  # `---`, keys, `---` right after the first block
        start = result.body_line + skipped
    elif not result.meta and not skipped:
        inner = _split("---\n" + body)  # an empty first block whose closing fence opens the keys
        start = result.body_line
    else:
        return
    if inner.closed and not inner.error and inner.meta:
        result.second_block_line = start
        result.second_block_keys = list(inner.meta)


def json_safe(value: Any) -> Any:
    """Return ``value`` with dates, times and other non-JSON scalars made JSON-safe.

    Dates and datetimes become ISO 8601 strings; sets and tuples become lists; mapping keys
    become strings; anything else unknown becomes ``str(value)``. Used wherever front
    matter reaches JSON (``--json`` output, the store).
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
