"""Node indexes: reading and writing the one-line entries of a node's ``AGENTS.md`` (seed 000 §1).

A node's ``AGENTS.md`` is its **index**: one list line per article, ``- [Title](file.md) —
one-liner``. Lines linking to a child's ``AGENTS.md`` are child-node lines, not article
entries. Parsing (:func:`parse_index`) and writing (:func:`index_line`, :func:`index_with_line`,
:func:`index_without_line`) live in this one module, so every line memtui writes is one its
own parser reads back.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from memtui.core import frontmatter
from memtui.core.findings import Finding
from memtui.core.workspace import NODE_INDEX


# A list item: bullet (-, *, +, –, •) or number, then a link at the start of the item.
_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?:[-*+\u2013\u2022]|\d+[.)])[ \t]+(?P<rest>.*)$")


# [Title](target "optional title") at the start of the item text; the title may hold brackets.
_LINK_AT_START = re.compile(
    r"^\[(?P<title>(?:[^\[\]]|\[[^\[\]]*\])*)\]\((?P<target><[^>]*>|[^)\s]+)(?:[ \t]+\"[^\"]*\")?\)"
)


# A redirect line: ``- [Old title](old.md) → [New title](new.md)`` (what a merge leaves behind).
_REDIRECT = re.compile(
    r"^[ \t]*(?:\u2192|->|=>)[ \t]*\[(?P<title>(?:[^\[\]]|\[[^\[\]]*\])*)\]\((?P<target><[^>]*>|[^)\s]+)\)"
)


# What separates the link from the one-liner: em dash, en dash, hyphen(s) or a colon.
_SEP = re.compile(r"^[ \t]*(?:\u2014|\u2013|--?|:)[ \t]*")


# Markdown links anywhere in a text (for the link-outside check).
_ANY_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\((<[^>]*>|[^)\s]+)(?:[ \t]+\"[^\"]*\")?\)")


_FENCE = re.compile(r"^[ \t]*(```|~~~)")


_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$")


def _clean_target(target: str) -> str:
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    return target.split("#", 1)[0].split("?", 1)[0]


def is_local_link(target: str) -> bool:
    """True for a relative or absolute file link (not ``http:``, ``mailto:``, ``#anchor``)."""
    target = _clean_target(target)
    return bool(target) and not _SCHEME.match(target)


@dataclass(slots=True)
class IndexEntry:
    """One list line of a node index that links to a local Markdown file.

    Attributes:
        title: the link text as written.
        target: the link target as written (``file.md``, ``child/AGENTS.md``).
        one_liner: the text after the separator, or ``None`` when missing.
        line: 1-based line in ``AGENTS.md``.
        path: the target's path relative to the memory root (normalised, ``/``), or ``None``
            when it leads outside the memory tree.
        is_child_node: the target is another node's ``AGENTS.md``.
    """

    title: str
    target: str
    one_liner: str | None
    line: int
    path: str | None
    is_child_node: bool


@dataclass(slots=True)
class IndexRedirect:
    """A redirect line of a node index, ``- [Old title](old.md) → [New title](new.md)``: the
    article ``old`` was merged into ``new`` (seed 000 §4 step 5), so links to it still lead
    somewhere. It is not an article entry.

    Attributes:
        title, target, path: the old article's link text, target as written, and path
            relative to the memory root (``None`` when it leads outside the tree).
        new_title, new_target, new_path: the same for the article it leads to.
        line: 1-based line in ``AGENTS.md``.
    """

    title: str
    target: str
    path: str | None
    new_title: str
    new_target: str
    new_path: str | None
    line: int


@dataclass(slots=True)
class NodeIndex:
    """A parsed ``AGENTS.md``.

    Attributes:
        node: the node's path relative to the memory root (``""`` for the root).
        exists: the node has an ``AGENTS.md``.
        meta: its front matter (``owner``, …), ``{}`` when none.
        title: its first heading, or the folder name.
        entries: article entries (links to local ``.md`` files other than ``AGENTS.md``).
        children: child-node lines (links to ``*/AGENTS.md``).
        redirects: redirect lines (:class:`IndexRedirect`) left by merges.
        text: the whole text (BOM removed), for display.
        body: the text after the front matter.
        body_line: file line where ``body`` starts.
        findings: problems met while reading and parsing.
    """

    node: str
    exists: bool
    meta: dict[str, Any] = field(default_factory=dict)
    title: str = ""
    entries: list[IndexEntry] = field(default_factory=list)
    children: list[IndexEntry] = field(default_factory=list)
    redirects: list[IndexRedirect] = field(default_factory=list)
    text: str = ""
    body: str = ""
    body_line: int = 1
    findings: list[Finding] = field(default_factory=list)


def index_line(title: str, target: str, one_liner: str | None) -> str:
    """The node index line ``- [Title](target) — one-liner`` for a file: the one writer of
    index lines, so that :func:`parse_index` always reads back what memtui wrote.

    Args:
        title: the link text; runs of white space (line breaks included) become one space.
            Square brackets are kept when :func:`parse_index` reads them back (balanced, one
            level deep: ``[x] fix``), else written as parentheses.
        target: the link target relative to the node; one holding spaces, parentheses or
            angle brackets is written in ``<…>`` (CommonMark), with ``<``/``>`` escaped.
        one_liner: the entry's one-liner; ``None`` or ``""`` writes the line without one.

    Returns:
        The line, without a line end.
    """
    title = " ".join(title.split())
    link = _LINK_AT_START.match(f"[{title}](x)")
    if link is None or link.group("title") != title:
        title = title.replace("[", "(").replace("]", ")")
    if any(ch in target for ch in " ()<>") or not target:
        target = "<" + target.replace("<", "%3C").replace(">", "%3E") + ">"
    line = f"- [{title}]({target})"
    return f"{line} — {one_liner}" if one_liner else line


def parse_index(text: str, node: str, shown: str) -> NodeIndex:
    """Parse the text of a node's ``AGENTS.md``.

    Args:
        text: the file's text (BOM allowed).
        node: the node's path relative to the memory root (``""`` for the root).
        shown: the file's workspace-relative path, for findings.

    Returns:
        A :class:`NodeIndex`. Tolerated: ``*``/``-``/``+``/``–`` bullets and numbered items;
        ``—``, ``–``, ``-``, ``--`` and ``:`` separators; a missing one-liner; link titles in
        quotes; list lines inside fenced code blocks are ignored. Findings: unparsable front
        matter, duplicate entries, a list line with an unclosed link.
    """
    fm = frontmatter.split(text)
    index = NodeIndex(node=node, exists=True, meta=fm.meta, text=text.lstrip("\ufeff"),
                      body=fm.body, body_line=fm.body_line)
    if fm.error:
        index.findings.append(Finding.make(
            "front-matter-unclosed" if fm.present and not fm.closed else "front-matter-invalid",
            shown, fm.error, "fix the YAML between the two `---` lines",
            line=fm.error_line, column=fm.error_column))
    second = fm.second_block_finding(shown)
    if second is not None:
        index.findings.append(second)
    seen: dict[str, int] = {}
    in_fence = False
    for offset, line in enumerate(fm.body.splitlines()):
        number = fm.body_line + offset
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if not index.title:
            heading = HEADING.match(line)
            if heading:
                index.title = heading.group(1)
        item = _ITEM.match(line)
        if not item:
            continue
        rest = item.group("rest")
        link = _LINK_AT_START.match(rest)
        if not link:
            if rest.startswith("[") and "](" in rest and ")" not in rest.split("](", 1)[1]:
                index.findings.append(Finding.make(
                    "index-line-malformed", shown, "the link on this list line is never closed",
                    "write it as - [Title](file.md) — one-liner", line=number))
            continue
        target = link.group("target")
        if not is_local_link(target):
            continue
        clean = _clean_target(target)
        if not clean.lower().endswith(".md"):
            continue
        after = rest[link.end():]
        redirect = _REDIRECT.match(after)
        if redirect:
            new_target = redirect.group("target")
            index.redirects.append(IndexRedirect(
                link.group("title"), target, _memory_path(node, clean), redirect.group("title"),
                new_target, _memory_path(node, _clean_target(new_target)), number))
            continue
        sep = _SEP.match(after)
        one_liner = after[sep.end():].strip() if sep else after.strip()
        joined = os.path.normpath(os.path.join(node, clean)) if not clean.startswith("/") else None
        path = None if joined is None or joined == ".." or joined.startswith("../") else joined.replace(os.sep, "/")
        entry = IndexEntry(
            title=link.group("title"), target=target, one_liner=one_liner or None, line=number,
            path=path, is_child_node=os.path.basename(clean) == NODE_INDEX)
        if entry.is_child_node:
            index.children.append(entry)
            continue
        key = path or clean
        if key in seen:
            index.findings.append(Finding.make(
                "index-duplicate", shown,
                f"{clean!r} is listed again (first on line {seen[key]})",
                "delete one of the two lines", line=number))
        else:
            seen[key] = number
        index.entries.append(entry)
    if not index.title:
        index.title = Path(node).name or "memory"
    return index


def _memory_path(node: str, clean: str) -> str | None:
    """A node-relative link target as a memory-relative path (``None`` when it leaves the tree)."""
    if clean.startswith("/"):
        return None
    joined = os.path.normpath(os.path.join(node, clean))
    if joined == ".." or joined.startswith("../"):
        return None
    return joined.replace(os.sep, "/")


def one_liner_matches(one_liner: str, summary: str) -> bool:
    """True when an index one-liner says the article's ``summary`` (white space aside): the
    one rule of the ``one-liner-mismatch`` finding and of the consolidation's refresh."""
    return " ".join(summary.split()) == " ".join(one_liner.split())


def redirect_line(title: str, target: str, new_title: str, new_target: str) -> str:
    """The redirect line ``- [title](target) → [new_title](new_target)`` a merge leaves in
    the retired article's node index (read back by :func:`parse_index` as an
    :class:`IndexRedirect`, never as an entry)."""
    old = index_line(title, target, None)
    new = index_line(new_title, new_target, None)[2:]
    return f"{old} \u2192 {new}"


def iter_links(text: str, raw: list[tuple[int, str]] | None = None) -> Iterator[tuple[int, str]]:
    """Yield ``(line offset, target)`` for every local Markdown link in ``text`` outside code
    fences and inline code (0-based line offsets); ``raw``: :func:`raw_links` of ``text``,
    when the caller has them."""
    for offset, target in raw_links(text) if raw is None else raw:
        if is_local_link(target):
            yield offset, _clean_target(target)


def iter_anchored_links(text: str, raw: list[tuple[int, str]] | None = None) -> Iterator[tuple[int, str, str | None]]:
    """Yield ``(line offset, file target or "", anchor or None)`` for every local Markdown
    link in ``text`` (outside code), pure ``#anchor`` links included (target ``""``);
    ``raw`` as for :func:`iter_links`."""
    for offset, target in raw_links(text) if raw is None else raw:
        target = target[1:-1] if target.startswith("<") and target.endswith(">") else target
        path, _, anchor = target.partition("#")
        path = path.split("?", 1)[0]
        if path and _SCHEME.match(path):
            continue
        if not path and not anchor:
            continue
        yield offset, path, (anchor or None) if "#" in target else None


def raw_links(text: str) -> list[tuple[int, str]]:
    """``(line offset, target as written)`` of every Markdown link in ``text`` outside code
    fences and inline code (0-based line offsets, lines as :meth:`str.splitlines` counts them)."""
    if "](" not in text:
        return []
    fenced = "```" in text or "~~~" in text  # else no line can open a fence
    out: list[tuple[int, str]] = []
    in_fence = False
    for offset, line in enumerate(text.splitlines()):
        if fenced and _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or "](" not in line:
            continue
        stripped = re.sub(r"`[^`]*`", "", line) if "`" in line else line
        out.extend((offset, match.group(1)) for match in _ANY_LINK.finditer(stripped))
    return out


# -- editing a node index ------------------------------------------------------------------------

def _eol(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def index_with_line(text: str, node: str, target: str, title: str, one_liner: str,
                    child: bool = False) -> str:
    """``text`` (a node's ``AGENTS.md``) with the line for ``target`` set to
    ``- [title](target) — one_liner``: replaced in place when listed (bullet kept), else added
    after the last line of its kind (article or child-node lines), else under an empty
    ``## Articles`` / ``## Child nodes`` heading (a new node's index has one), else in a new
    section at the end. BOM and line ends are kept."""
    want = os.path.normpath(os.path.join(node, target)).replace(os.sep, "/")
    text = _without_redirects(text, node, want)  # the article is back: its redirect goes
    index = parse_index(text, node, NODE_INDEX)
    entries = index.children if child else index.entries
    lines = text.splitlines(keepends=True)
    eol = _eol(text)
    new = index_line(title, target, one_liner)
    for entry in entries:
        if entry.path == want:
            old = lines[entry.line - 1]
            stripped = old.rstrip("\r\n")
            ending = old[len(stripped):]
            indent = stripped[: len(stripped) - len(stripped.lstrip())]
            bullet = stripped.lstrip().split(" ", 1)[0]
            lines[entry.line - 1] = indent + bullet + new[1:] + ending
            return "".join(lines)
    if entries:
        at = max(e.line for e in entries)
        if not lines[at - 1].endswith(("\n", "\r")):
            lines[at - 1] += eol
        lines.insert(at, new + eol)
        return "".join(lines)
    heading = "## Child nodes" if child else "## Articles"
    for h, ln in enumerate(lines):  # an empty section of its kind: fill it (no second heading)
        if ln.strip().lower() == heading.lower():
            if not ln.endswith(("\n", "\r")):
                lines[h] += eol
            j = h + 1
            if j < len(lines) and not lines[j].strip():
                j += 1
            lines.insert(j, new + eol)
            if j + 1 < len(lines) and lines[j + 1].strip():
                lines.insert(j + 1, eol)
            return "".join(lines)
    out = text
    if out and not out.endswith(("\n", "\r")):
        out += eol
    if out.strip("\ufeff"):
        out += eol
    return out + heading + eol + eol + new + eol


def _without_redirects(text: str, node: str, path: str) -> str:
    """``text`` without the redirect lines of the memory-relative ``path``."""
    drop = {r.line for r in parse_index(text, node, NODE_INDEX).redirects if r.path == path}
    if not drop:
        return text
    return "".join(ln for i, ln in enumerate(text.splitlines(keepends=True), 1) if i not in drop)


def index_with_redirect(text: str, node: str, target: str, title: str, new_target: str,
                        new_title: str) -> str:
    """``text`` (a node's ``AGENTS.md``) with the article line of ``target`` replaced by its
    redirect line to ``new_target`` (:func:`redirect_line`), in place (bullet kept) when it
    is listed, else added after the last article line. BOM and line ends are kept."""
    index = parse_index(text, node, NODE_INDEX)
    want = os.path.normpath(os.path.join(node, target)).replace(os.sep, "/")
    new = redirect_line(title, target, new_title, new_target)
    lines = text.splitlines(keepends=True)
    eol = _eol(text)
    listed = [e for e in index.entries if e.path == want]
    if listed:
        old = lines[listed[0].line - 1]
        stripped = old.rstrip("\r\n")
        indent = stripped[: len(stripped) - len(stripped.lstrip())]
        bullet = stripped.lstrip().split(" ", 1)[0]
        lines[listed[0].line - 1] = indent + bullet + new[1:] + (old[len(stripped):] or eol)
        drop = {e.line for e in listed[1:]}
        return "".join(ln for i, ln in enumerate(lines, 1) if i not in drop)
    anchors = [e.line for e in index.entries] + [r.line for r in index.redirects]
    if anchors:
        at = max(anchors)
        if not lines[at - 1].endswith(("\n", "\r")):
            lines[at - 1] += eol
        lines.insert(at, new + eol)
        return "".join(lines)
    out = text if not text or text.endswith(("\n", "\r")) else text + eol
    return out + new + eol


def index_without_line(text: str, node: str, target: str) -> str:
    """``text`` without the article line(s) for ``target`` (unchanged when not listed)."""
    index = parse_index(text, node, NODE_INDEX)
    want = os.path.normpath(os.path.join(node, target)).replace(os.sep, "/")
    drop = {e.line for e in index.entries if e.path == want}
    return "".join(ln for i, ln in enumerate(text.splitlines(keepends=True), 1) if i not in drop)


def new_node_index(title: str, owner: str, one_liner: str) -> str:
    """The ``AGENTS.md`` of a new node: front matter ``owner:``, heading, description."""
    return f"---\nowner: {owner}\n---\n# {title}\n\n{one_liner}\n\n## Articles\n\n"
