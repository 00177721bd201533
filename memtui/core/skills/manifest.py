"""The skill manifest: ``skill-manifest.json`` beside ``SKILL.md`` (seed 000 Part II §8, §10).

Seed 000 §8: every skill carries five parts — inputs, read set, classification, write packet,
verification — "and a skill that cannot state one of them is not ready to be published";
around them a dry-run default (or the recorded exemption test), a teardown for every write,
and a coverage map where more than one write path exists. The manifest is a draft contract:
"a small required core the platform validates and an open body a case may extend" (seed 000,
Challenges). memtui ships that core as ``skill-manifest.schema.json`` (this package) and
checks it with ``jsonschema``; the two rules a schema cannot say plainly (a dry-run default
when the skill writes, a coverage map when its writes take more than one path) are checked
here after the schema, on the validated shape.

Bad input never raises: a manifest that is not JSON, not UTF-8, over :data:`MAX_MANIFEST_BYTES`
(checked before it is read) or nested deeper than :data:`MAX_DEPTH` is one
``skill-manifest-unreadable`` finding.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from memtui.core.findings import Finding, sort_key

#: The manifest's file name, beside ``SKILL.md``.
MANIFEST_FILE = "skill-manifest.json"

#: The schema shipped in this package.
SCHEMA_FILE = "skill-manifest.schema.json"

#: A manifest larger than this is not read (a manifest is a few kilobytes; 256 KiB is generous).
MAX_MANIFEST_BYTES = 256 * 1024

#: Deepest nesting of arrays and objects read (the schema's core is four levels deep).
MAX_DEPTH = 32

#: The five parts (seed 000 §8), as JSON keys with the words shown to people.
PARTS = {
    "inputs": "inputs",
    "read_set": "read set",
    "classification": "classification",
    "write_packet": "write packet",
    "verification": "verification",
}

#: Every top-level key the core requires, with its words.
REQUIRED = {**PARTS, "tests": "tests (a command and its arguments)"}



@dataclass(frozen=True, slots=True)
class TestSpec:
    """The skill's own tests as the manifest names them: ``command`` and ``args`` are run in
    the skill's folder with no shell; ``timeout`` in seconds when the manifest gives one."""

    command: str
    args: tuple[str, ...] = ()
    timeout: float | None = None

    @property
    def argv(self) -> list[str]:
        """``[command, *args]``: exactly what is run."""
        return [self.command, *self.args]

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "args": list(self.args), "timeout": self.timeout}


@dataclass(slots=True)
class Manifest:
    """A skill's manifest as checked.

    Attributes:
        place: the manifest's path as shown (workspace-relative).
        present: the file exists.
        data: the parsed object, or ``None`` when absent or unreadable.
        findings: its problems, most severe first (``skill-manifest-*`` codes).
        missing: the words of each part it does not state (``"write packet"``,
            ``"teardown of write w1"``), in the order found.
    """

    place: str
    present: bool = False
    data: dict[str, Any] | None = None
    findings: list[Finding] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Present, readable, and no finding: what publication requires (seed 000 §8)."""
        return self.data is not None and not self.findings

    @property
    def tests(self) -> TestSpec | None:
        """The tests it names, when their shape is valid; else ``None``."""
        spec = (self.data or {}).get("tests")
        if not isinstance(spec, dict) or not isinstance(spec.get("command"), str) or not spec["command"]:
            return None
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return None
        timeout = spec.get("timeout")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 600:
            return TestSpec(spec["command"], tuple(args), None)
        return TestSpec(spec["command"], tuple(args), float(timeout))

    def why_not(self) -> str:
        """One sentence: why it cannot be published (``""`` when it can)."""
        if not self.present:
            return f"it has no {MANIFEST_FILE}"
        if self.data is None:
            return self.findings[0].message if self.findings else f"{MANIFEST_FILE} cannot be read"
        if self.missing:
            return "its manifest does not state " + ", ".join(self.missing)
        if self.findings:
            return self.findings[0].message
        return ""

    def to_json(self) -> dict[str, Any]:
        return {"place": self.place, "present": self.present, "complete": self.complete,
                "missing": list(self.missing), "tests": self.tests.to_json() if self.tests else None,
                "findings": [f.to_json() for f in self.findings]}


def schema_text() -> str:
    """The shipped JSON Schema of the manifest's core, as the file holds it (``memtui skills schema``)."""
    return resources.files("memtui.core.skills").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The shipped JSON Schema (draft 2020-12) of the manifest's core."""
    return json.loads(schema_text())


@lru_cache(maxsize=1)
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


def present_findings(folder: str | os.PathLike[str], place: str) -> list[Finding]:
    """The findings of ``folder/skill-manifest.json`` when the skill has one (not JSON, a wrong
    shape, a part missing): a broken file is a problem of the skill wherever its findings are
    shown (``memtui audit``, ``skills check``, the Skills area's valid column). A skill with no
    manifest gives none here: that it cannot be published is a governance finding
    (``skill-manifest-missing``, :mod:`memtui.core.skills.status`). Never raises."""
    if not os.path.lexists(Path(folder) / MANIFEST_FILE):
        return []
    return [f for f in read_manifest(folder, place).findings if f.code != "skill-manifest-missing"]


def read_manifest(folder: str | os.PathLike[str], place: str) -> Manifest:
    """Read and check ``folder/skill-manifest.json``.

    Args:
        folder: the skill folder.
        place: the manifest's path as shown in findings (workspace-relative).

    Returns:
        A :class:`Manifest`; an absent file gives ``present=False`` and a
        ``skill-manifest-missing`` finding. Never raises for bad input.
    """
    path = Path(folder) / MANIFEST_FILE
    try:
        if path.is_symlink():
            return _unreadable(place, "is a symbolic link; a manifest is a plain file in the skill's folder")
        size = path.stat().st_size
    except FileNotFoundError:
        m = Manifest(place)
        m.findings.append(Finding.make(
            "skill-manifest-missing", place, f"the skill has no {MANIFEST_FILE}, so it cannot be published",
            f"write {MANIFEST_FILE} beside SKILL.md stating inputs, read set, classification, write packet, "
            f"verification and tests"))
        m.missing = list(REQUIRED.values())
        return m
    except OSError as exc:
        return _unreadable(place, f"cannot be read ({exc.strerror or exc})")
    if size > MAX_MANIFEST_BYTES:
        return _unreadable(place, f"is {size:,} bytes, over the {MAX_MANIFEST_BYTES:,} bytes a manifest may take; "
                                  "it was not read")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        return _unreadable(place, f"cannot be read ({exc.strerror or exc})")
    return check_manifest_bytes(data, place)


def check_manifest_bytes(data: bytes, place: str) -> Manifest:
    """Check a manifest given as bytes (see :func:`read_manifest`; no size check is made on
    the file, but bytes over :data:`MAX_MANIFEST_BYTES` are refused the same way)."""
    if len(data) > MAX_MANIFEST_BYTES:
        return _unreadable(place, f"is over the {MAX_MANIFEST_BYTES:,} bytes a manifest may take; it was not read")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return _unreadable(place, f"is not UTF-8 text (byte {exc.start})")
    try:
        parsed = json.loads(text)
    except RecursionError:
        return _unreadable(place, f"is nested deeper than {MAX_DEPTH} levels")
    except json.JSONDecodeError as exc:
        return _unreadable(place, f"is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                           line=exc.lineno)
    if not isinstance(parsed, dict):
        return _unreadable(place, f"holds a JSON {type(parsed).__name__ if parsed is not None else 'null'}, "
                                  "not an object of the manifest's parts")
    if _depth(parsed) > MAX_DEPTH:
        return _unreadable(place, f"is nested deeper than {MAX_DEPTH} levels")
    m = Manifest(place, present=True, data=parsed)
    _schema_findings(m, parsed)
    if not any(f.code == "skill-manifest-invalid" for f in m.findings):
        _rule_findings(m, parsed)
    m.findings.sort(key=sort_key)
    return m


def _unreadable(place: str, why: str, line: int | None = None) -> Manifest:
    m = Manifest(place, present=True)
    m.findings.append(Finding.make(
        "skill-manifest-unreadable", place, f"{MANIFEST_FILE} {why}",
        "write it as one JSON object of the manifest's parts", line=line))
    m.missing = list(REQUIRED.values())
    return m


def _depth(value: Any) -> int:
    """Nesting depth of ``value`` (a scalar is 0), counted without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def _where(path: Any) -> str:
    """A JSON path of ``error.absolute_path`` as ``write_packet.writes[0].teardown``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the manifest"


def _part_words(path: list[Any], key: str, instance: Any) -> str:
    """The words of a missing ``key`` at ``path``: a top-level part by its name, a write's
    teardown by the write's id, anything else by its JSON path."""
    if not path:
        return REQUIRED.get(key, key)
    if key == "teardown" and len(path) == 3 and path[:2] == ["write_packet", "writes"]:
        wid = instance.get("id") if isinstance(instance, dict) and isinstance(instance.get("id"), str) else path[2]
        return f"the teardown of write {wid}"
    return f"{_where(path + [key])}"


def _schema_findings(m: Manifest, data: dict[str, Any]) -> None:
    for error in sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        path = list(error.absolute_path)
        if error.validator == "required":
            have = error.instance if isinstance(error.instance, dict) else {}
            for key in error.validator_value:
                if key in have:
                    continue
                words = _part_words(path, key, error.instance)
                m.missing.append(words)
                m.findings.append(Finding.make(
                    "skill-manifest-part-missing", m.place, f"the manifest does not state {words}",
                    f"add `{key}` at {_where(path)}"))
            continue
        message = error.message
        if len(message) > 200:
            message = message[:199] + "…"
        m.findings.append(Finding.make(
            "skill-manifest-invalid", m.place, f"{_where(path)}: {message}",
            f"correct {_where(path)} to the shape the manifest schema gives ({SCHEMA_FILE})"))


def _rule_findings(m: Manifest, data: dict[str, Any]) -> None:
    """The dry-run default and the coverage map (seed 000 §8; PG-21, D136)."""
    packet = data.get("write_packet")
    if not isinstance(packet, dict):
        return
    writes = [w for w in packet.get("writes") or [] if isinstance(w, dict)]
    if writes and packet.get("dry_run") is not True and not isinstance(packet.get("dry_run_exemption"), dict):
        words = "its dry-run default (or the recorded exemption test)"
        m.missing.append(words)
        m.findings.append(Finding.make(
            "skill-manifest-part-missing", m.place, f"the skill writes but the manifest does not state {words}",
            "set write_packet.dry_run to true (the packet is simulated before it is promoted), or give "
            "write_packet.dry_run_exemption.test"))
    paths = sorted({w["path"] for w in writes if isinstance(w.get("path"), str)})
    if len(paths) > 1 and not packet.get("coverage"):
        words = "the coverage map"
        m.missing.append(words)
        m.findings.append(Finding.make(
            "skill-manifest-part-missing", m.place,
            f"the writes take {len(paths)} write paths ({', '.join(paths)}) but the manifest does not state {words}",
            "add write_packet.coverage: per configuration object, the write path that carries it and why"))
