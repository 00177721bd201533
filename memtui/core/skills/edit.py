"""Editing a ``SKILL.md``: minimal edits that keep BOM and line ends, through the guarded write.
"""

from __future__ import annotations

import hashlib
import re

import yaml

from memtui.core import frontmatter
from memtui.core.text import final_newline
from memtui.core.errors import ConflictError, ReadOnlyError
from memtui.core.skills.model import Skill
from memtui.core.skills.rules import parse_skill


_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9(][^\n\r]*$")


def _front_matter_lines(text: str) -> tuple[str, str, list[str], int]:
    """``(bom, line end, lines without the BOM, index of the closing ``---`` line)`` of a SKILL.md
    whose front matter can be edited.

    Raises:
        ValueError: a second front matter block (the key would land in the block nobody reads),
            no front matter, or front matter never closed.
    """
    fm = frontmatter.split(text)
    if fm.second_block_line is not None:  # the key would land in the block nobody reads
        raise ValueError(f"{fm.second_block_message()}; {frontmatter.SECOND_BLOCK_FIX}")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body_text = text[len(bom):]
    eol = _line_end(body_text)
    lines = body_text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        raise ValueError("the file has no front matter to edit; add a `---` block first")
    end = next((i for i in range(1, len(lines)) if re.match(r"^(?:---|\.\.\.)[ \t]*$", lines[i].rstrip("\r\n"))), None)
    if end is None:
        raise ValueError("the front matter is never closed (no second `---` line); close it first")
    return bom, eol, lines, end


def yaml_scalar(value: str) -> str:
    """``value`` as a YAML scalar: plain when it reads back unchanged as text, else quoted.

    A value that YAML would read as a number, boolean, date or null, or that holds ``: ``,
    `` #`` or starts with a symbol, is written in double quotes (JSON escaping, which YAML
    reads) — so ``yes`` stays the text ``yes`` and ``a: b`` stays valid.
    """
    import json

    if _PLAIN_SAFE.match(value) and value == value.strip() and ": " not in value \
            and " #" not in value and not value.endswith(":"):
        try:
            loaded = yaml.safe_load(f"k: {value}\n")
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, dict) and loaded.get("k") == value:
            return value
    return json.dumps(value, ensure_ascii=False)


def _line_end(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def set_front_matter_field(text: str, key: str, value: str) -> str:
    """Return ``text`` with the top-level front matter ``key`` set to ``value``.

    Only the line(s) of that key change: a one-line value, or a block/indented value with
    its continuation lines, is replaced by one ``key: value`` line; a missing key is added
    before the closing fence. The BOM (if any) and the file's line end (CRLF or LF) are
    kept, and the new line uses that same line end (no mixed line ends).

    Args:
        text: the whole file as decoded text, BOM included if it had one.
        key: a top-level key (``description``, ``name`` …).
        value: the new text (single line; line breaks are written as ``\\n`` escapes).

    Raises:
        ValueError: the file has no closed front matter block, ``key`` appears more than
            once (the user must choose which line to keep), or a second front matter block
            follows the first (the edit would land in the block agents do not read).
    """
    bom, eol, lines, end = _front_matter_lines(text)
    key_re = re.compile(rf"^{re.escape(key)}[ \t]*:(?:[ \t]|$)")
    starts = [i for i in range(1, end) if key_re.match(lines[i])]
    if len(starts) > 1:
        raise ValueError(f"{key} is given {len(starts)} times; delete the extra lines first")
    new_line = f"{key}: {yaml_scalar(value)}{eol}"
    if not starts:
        lines.insert(end, new_line)
    else:
        first = starts[0]
        last = first
        for j in range(first + 1, end):
            stripped = lines[j].rstrip("\r\n")
            if stripped == "" or stripped[0] in " \t":
                last = j
            else:
                break
        # trailing blank lines belong to the block after it, not to this value
        while last > first and lines[last].strip() == "":
            last -= 1
        lines[first:last + 1] = [new_line]
    return bom + "".join(lines)


def set_metadata_field(text: str, key: str, value: str) -> str:
    """Return ``text`` with ``metadata.<key>`` set to ``value`` in its front matter.

    ``metadata`` is the one mapping the Agent Skills rules leave for a skill's own facts (a
    binding to a memory node: :mod:`memtui.core.skills.binding`). A block ``metadata:``
    mapping gets the key's line replaced or added (indented like its other keys); a missing
    ``metadata`` is added before the closing fence. BOM and line ends are kept as in
    :func:`set_front_matter_field`.

    Raises:
        ValueError: no closed front matter, ``metadata`` given more than once or written
            inline (``metadata: {…}``, edit it by hand), or a second front matter block.
    """
    bom, eol, lines, end = _front_matter_lines(text)
    starts = [i for i in range(1, end) if re.match(r"^metadata[ \t]*:", lines[i])]
    if len(starts) > 1:
        raise ValueError(f"metadata is given {len(starts)} times; delete the extra block first")
    if not starts:
        lines[end:end] = [f"metadata:{eol}", f"  {key}: {yaml_scalar(value)}{eol}"]
        return bom + "".join(lines)
    first = starts[0]
    if lines[first].split(":", 1)[1].strip() not in ("", ):
        raise ValueError("metadata is written on one line; write it as a block (one key a line) to edit it here")
    block_end = first + 1
    while block_end < end and (lines[block_end][:1] in (" ", "\t") or not lines[block_end].strip()):
        block_end += 1
    indent = next((re.match(r"^[ \t]+", lines[i]).group(0) for i in range(first + 1, block_end)  # type: ignore[union-attr]
                   if lines[i].strip()), "  ")
    key_re = re.compile(rf"^{re.escape(indent)}{re.escape(key)}[ \t]*:")
    new_line = f"{indent}{key}: {yaml_scalar(value)}{eol}"
    for i in range(first + 1, block_end):
        if key_re.match(lines[i]):
            lines[i] = new_line
            return bom + "".join(lines)
    last = block_end
    while last > first + 1 and not lines[last - 1].strip():
        last -= 1
    lines.insert(last, new_line)
    return bom + "".join(lines)


def save_skill_metadata(session, skill: Skill, key: str, value: str, *,  # noqa: ANN001 - Session
                        client_id: str | None = None) -> Skill:
    """Set ``metadata.<key>`` of a skill through the guarded write (:func:`set_metadata_field`).

    Raises:
        ReadOnlyError, ConflictError, ValueError, OSError: as for :func:`save_skill_field`.
    """
    def change(old: str) -> str:
        return set_metadata_field(old, key, value)

    return _save(session, skill, change, "skills.set", {"key": f"metadata.{key}", "value": value}, client_id)


def save_skill_field(session, skill: Skill, key: str, value: str, *,  # noqa: ANN001 - Session
                     client_id: str | None = None) -> Skill:
    """Set one front matter field of a skill and save it through the guarded write.

    Args:
        session: the :class:`~memtui.core.session.Session` writing (lock, audit log).
        skill: a skill from the catalogue (its :attr:`Skill.sha256` is the bytes it was
            loaded from).
        key: the top-level key to set (for example ``description``).
        value: the new text.
        client_id: the request's id (a retry is not applied twice; seed 004).

    Returns:
        The skill re-read from disk after the save.

    Raises:
        ReadOnlyError: the skill is the administrator's (``shared-skills`` or a scope; seed
            002), or the session may not write.
        ConflictError: the file changed on disk since it was loaded (invariant 3).
        ValueError: see :func:`set_front_matter_field`.
        OSError: the write failed; the file is then unchanged (invariant 1).
    """
    def change(old: str) -> str:
        return set_front_matter_field(old, key, value)

    return _save(session, skill, change, "skills.set", {"key": key, "value": value}, client_id)


def save_skill_text(session, skill: Skill, text: str, *,  # noqa: ANN001 - Session
                    client_id: str | None = None) -> Skill:
    """Save an edited whole ``SKILL.md`` (the editor's text) through the guarded write.

    The file's BOM is kept (or not added), and every line end is written as the file's own
    (CRLF stays CRLF, LF stays LF), whatever line ends ``text`` uses, and a changed file
    ends with one (:func:`memtui.core.text.final_newline`). The text is otherwise written as given.

    Raises:
        ReadOnlyError, ConflictError, OSError: as for :func:`save_skill_field`.
    """
    def change(old: str) -> str:
        bom = "\ufeff" if old.startswith("\ufeff") else ""
        plain = text.lstrip("\ufeff").replace("\r\n", "\n")
        if _line_end(old) == "\r\n":
            plain = plain.replace("\n", "\r\n")
        return bom + plain

    return _save(session, skill, change, "skills.edit",
                 {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}, client_id)


def _save(session, skill: Skill, change, action: str, request: dict, client_id: str | None) -> Skill:  # noqa: ANN001
    if skill.read_only:
        raise ReadOnlyError(
            f"{skill.path} is the administrator's copy and read-only; "
            f"copy it into skills/ under another name to change it.", reference="seed 002")
    shown = session.ws.shown(skill.skill_md)

    def write(tx) -> None:  # noqa: ANN001 - Tx
        data = tx.read(shown)
        if data is None:
            raise ConflictError(f"{skill.path} is gone from disk since it was loaded; reload the list.")
        new = change(data.decode("utf-8", "replace")).encode("utf-8")
        if new != data:  # a changed file ends with a line end (an unchanged one is not written)
            new = final_newline(new)
        tx.replace(shown, new, base=skill.sha256 or hashlib.sha256(data).hexdigest())
        tx.detail.update({"skill": skill.key, **{k: v for k, v in request.items() if k != "value"}})

    session.write(action, shown, write, client_id=client_id, request=request)
    return parse_skill(skill.folder, skill.path, skill.root, key=skill.key)
