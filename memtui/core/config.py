"""``memtui.toml``: the one typed reader of a workspace's settings (DESIGN.md §3).

Every setting has a default, so a workspace needs no file. The file is read once, when the
workspace opens, into a :class:`Config` of frozen dataclasses; every command and screen reads
the typed fields (never the raw TOML), so the CLI and the TUI cannot drift apart (``[backup]
push`` was once read only on the TUI's path).

Validation (DESIGN.md §4 invariant 10): a TOML syntax error, an unknown table or key, or a
value of the wrong type is a ``config-invalid`` finding with the line it is on and a fix,
never a silent default and never a crash; the rest of the file still applies.

Why dataclasses and no schema library: the file is a dozen scalars in a few tables, and a
library such as pydantic would cost more start-up time than every headless command spends on
its work; the schema below is the documentation the README's ``memtui.toml`` section mirrors.

To add a setting: add a field (with its type and default) to the section's dataclass, and a
line to the README. Types accepted: ``str``, ``int`` (not ``bool``), ``float`` (an ``int``
is accepted), ``bool``, ``str | None`` and ``dict[str, str]`` (a table of text values).
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.files import DEFAULT_MAX_FILE_BYTES
from memtui.core.findings import Finding

#: The settings file at the top of a workspace.
CONFIG_NAME = "memtui.toml"


@dataclass(frozen=True, slots=True)
class UserSettings:
    """``[user]``: who memtui acts as."""

    #: the profile memtui acts as (``--as`` and ``$MEMTUI_PROFILE`` win), or ``None``
    profile: str | None = None


@dataclass(frozen=True, slots=True)
class LimitsSettings:
    """``[limits]``."""

    #: files larger than this (bytes) are read in part, with a finding
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """``[search]`` (no settings yet: the confidence of a precedent is calibrated)."""


@dataclass(frozen=True, slots=True)
class BackupSettings:
    """``[backup]`` (seed 004)."""

    #: the git repository memtui commits to (relative to the workspace), or ``None``
    repo: str | None = None
    #: the folder inside that repository
    path: str = "memtui-backup"
    #: the remote to push to, or ``None`` for the branch's own remote
    remote: str | None = None
    #: push after each backup (never forced)
    push: bool = False
    #: a restore or verify refuses a backup holding a file larger than this (bytes)
    max_restore_file_bytes: int = 256 * 1024 * 1024
    #: … or whose files add up to more than this (bytes): a restore holds them in memory
    max_restore_bytes: int = 2 * 1024 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class GraphSettings:
    """``[graph]``: where the knowledge graph lives."""

    #: the remote graph's MCP endpoint (``https://…/v1/mcp``), or ``None``: the workspace's
    #: ``config.json`` memory block, else ``memory/graph.jsonl``
    remote: str | None = None
    #: seconds without an answer from the remote before a request fails
    timeout: float = 30.0
    #: seconds a remote answer may take in all, however it trickles in (beside ``timeout``,
    #: which counts only silence)
    deadline: float = 600.0
    #: largest remote answer taken, in megabytes (a larger one is refused as it arrives)
    max_answer_mb: int = 512


@dataclass(frozen=True, slots=True)
class ConsolidateSettings:
    """``[consolidate]``: the scheduled consolidation pass (seed 000 §4 step 5, §7.3)."""

    #: an entry whose ``verified_at`` (or last passing re-verification) is older than this
    #: many days is stale
    stale_after_days: int = 180


@dataclass(frozen=True, slots=True)
class GitSettings:
    """``[git]``: the author of backup commits when git itself has none."""

    name: str | None = None
    email: str | None = None


@dataclass(frozen=True, slots=True)
class Config:
    """The settings of ``memtui.toml`` (defaults for whatever is missing or invalid).

    Attributes:
        user, limits, search, backup, git, graph: the tables of the same names.
        owners: ``[owners]``: node path (relative to the memory tree, ``""`` for the root) →
            owner profile (seed 000 §7.4b).
        environments: ``[environments]``: environment name → the version running there now
            (``production = "2.4"``); an entry that observed an older version of its
            ``environment`` is stale (seed 000 §7.3). Names compare case-insensitively.
        promotion: ``[promotion]``: node path → the promotion rule it requires, ``"review"``
            (human review instead of two independent uses) or ``"uses"`` (seed 000 §7.4b: the
            rule is revised per domain from its measurement); inherited like an owner.
        path: the file read, or ``None`` when there is none.
    """

    user: UserSettings = field(default_factory=UserSettings)
    owners: dict[str, str] = field(default_factory=dict)
    promotion: dict[str, str] = field(default_factory=dict)
    limits: LimitsSettings = field(default_factory=LimitsSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    backup: BackupSettings = field(default_factory=BackupSettings)
    git: GitSettings = field(default_factory=GitSettings)
    graph: GraphSettings = field(default_factory=GraphSettings)
    consolidate: ConsolidateSettings = field(default_factory=ConsolidateSettings)
    environments: dict[str, str] = field(default_factory=dict)
    path: Path | None = None

    # -- shortcuts used all over ---------------------------------------------------------------
    @property
    def profile(self) -> str | None:
        """``[user] profile``."""
        return self.user.profile

    @property
    def max_file_bytes(self) -> int:
        """``[limits] max_file_bytes``."""
        return self.limits.max_file_bytes


#: Keys memtui once read and no longer does: the finding says what to do instead.
RETIRED: dict[tuple[str, str], str] = {
    ("search", "precedent_threshold"): "the confidence of a precedent is calibrated now; delete the line",
}

#: Table name → its dataclass (``owners`` is a free table of text values).
_SECTIONS: dict[str, type] = {"user": UserSettings, "limits": LimitsSettings, "search": SearchSettings,
                              "backup": BackupSettings, "git": GitSettings,
                              "graph": GraphSettings, "consolidate": ConsolidateSettings}
_EXTRA_CHECKS = {("limits", "max_file_bytes"): (lambda v: v > 0, "must be a positive whole number of bytes"),
                 ("backup", "max_restore_file_bytes"): (lambda v: v > 0, "must be a positive whole number of bytes"),
                 ("backup", "max_restore_bytes"): (lambda v: v > 0, "must be a positive whole number of bytes"),
                 ("graph", "timeout"): (lambda v: v > 0, "must be a positive number of seconds"),
                 ("graph", "deadline"): (lambda v: v > 0, "must be a positive number of seconds"),
                 ("graph", "max_answer_mb"): (lambda v: v > 0, "must be a positive whole number of megabytes"),
                 ("graph", "remote"): (lambda v: v.startswith(("http://", "https://")),
                                       "must be an http:// or https:// URL"),
                 ("consolidate", "stale_after_days"): (lambda v: v > 0, "must be a positive whole number of days")}


def _line_of(text: str, table: str | None, key: str | None) -> int | None:
    """The 1-based line of ``[table]`` (or of ``key`` inside it) in ``text``, if it is found."""
    in_table = table is None
    header = re.compile(r"^\s*\[\s*(?P<name>[^\]]+?)\s*\]")
    for number, line in enumerate(text.splitlines(), 1):
        found = header.match(line)
        if found:
            in_table = found.group("name").strip().strip('"') == table
            if in_table and key is None:
                return number
            continue
        if in_table and key is not None and re.match(rf'^\s*"?{re.escape(key)}"?\s*=', line):
            return number
    return None


def _type_name(kind: Any) -> str:
    names = {str: "text in quotes", int: "a whole number", float: "a number", bool: "true or false"}
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if args:
        return names.get(args[0], str(args[0]))
    return names.get(kind, str(kind))


def _fits(value: Any, kind: Any) -> bool:
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        return any(_fits(value, k) for k in typing.get_args(kind) if k is not type(None))
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


#: How a table reader reports a problem: ``problem(table, key, message, fix)``, placed at the
#: line of ``[table] key``.
Problem = Callable[[str | None, str | None, str, str], None]


def _read_environments(value: Any, problem: Problem) -> dict[str, str]:
    """``[environments]``: name (case-folded) → version text; a bad line is a problem."""
    if not isinstance(value, dict):
        problem(None, "environments", "environments must be a table of name = \"version\" lines",
                'write [environments] then production = "2.4"')
        return {}
    out = {}
    for name, version in value.items():
        if isinstance(version, (str, int, float)) and not isinstance(version, bool) and str(version).strip():
            out[str(name).strip().casefold()] = str(version).strip()
        else:
            problem("environments", name, f"[environments] {name!r} must be a version (text)",
                    'write it as production = "2.4"')
    return out


def _read_owners(value: Any, problem: Problem) -> dict[str, str]:
    """``[owners]``: node path → owning profile; a bad line is a problem."""
    if not isinstance(value, dict):
        problem(None, "owners", "owners must be a table of node = \"profile\" lines", 'write [owners] then "node/path" = "profile.name"')
        return {}
    out = {}
    for node, owner in value.items():
        if isinstance(owner, str) and owner.strip():
            out[str(node).strip("/")] = owner.strip()
        else:
            problem("owners", node, f"[owners] {node!r} must be a profile name (text)",
                    'write it as "node/path" = "profile.name"')
    return out


def _read_section(table: str, kind: type, value: dict[str, Any], problem: Problem) -> dict[str, Any]:
    """The settings of one table that can be used, by key: a retired, unknown, mistyped or
    out-of-range key is a problem and keeps its default."""
    hints = typing.get_type_hints(kind)
    known = {f.name for f in dataclasses.fields(kind)}
    accepted: dict[str, Any] = {}
    for key, item in value.items():
        if (table, key) in RETIRED:
            problem(table, key, f"[{table}] {key} is no longer used", RETIRED[(table, key)])
            continue
        if key not in known:
            problem(table, key, f"[{table}] {key} is not a memtui setting",
                    f"the settings of [{table}] are: {', '.join(sorted(known)) or 'none'}")
            continue
        if not _fits(item, hints[key]):
            problem(table, key, f"[{table}] {key} must be {_type_name(hints[key])}, not {item!r}",
                    f"write {key} = <{_type_name(hints[key])}>, or delete the line for the default")
            continue
        check = _EXTRA_CHECKS.get((table, key))
        if check is not None and not check[0](item):
            problem(table, key, f"[{table}] {key} {check[1]}, not {item!r}",
                    "give a value above 0" if isinstance(item, (int, float)) else "correct the value")
            continue
        accepted[key] = float(item) if hints[key] is float else item
    if "profile" in accepted and isinstance(accepted["profile"], str):
        accepted["profile"] = accepted["profile"].strip() or None
    return accepted


def _promotion_table(value: Any, problem: Problem) -> dict[str, str]:
    """``[promotion]``: node path → ``"review"`` or ``"uses"``; anything else is a problem."""
    out: dict[str, str] = {}
    if not isinstance(value, dict):
        problem(None, "promotion", "promotion must be a table of node = \"review\" lines",
                'write [promotion] then "node/path" = "review"')
        return out
    for node, rule in value.items():
        if isinstance(rule, str) and rule.strip() in ("review", "uses"):
            out[str(node).strip("/")] = rule.strip()
        else:
            problem("promotion", node, f"[promotion] {node!r} must be \"review\" or \"uses\"",
                    'write it as "node/path" = "review"')
    return out


def load(path: Path) -> tuple[Config, list[Finding]]:
    """Read the settings file at ``path`` (``memtui.toml``); a missing file gives the defaults.

    Args:
        path: the file (it need not exist).

    Returns:
        ``(config, findings)``. Every problem is a ``config-invalid`` finding naming the
        table, key and line, with a fix; the setting concerned keeps its default and every
        other setting applies. A file that is not TOML at all gives the defaults and one
        finding with the line TOML reports. Never raises.
    """
    if not path.exists():
        return Config(), []
    shown = path.name
    try:
        text = path.read_text(encoding="utf-8-sig")
        data = tomllib.loads(text)
    except RecursionError:  # tomllib recurses once per nested array or inline table
        return Config(path=path), [Finding.make(
            "config-invalid", shown, "cannot be read: arrays or tables are nested too deeply to read",
            "remove the deep nesting; memtui uses the defaults meanwhile")]
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        line = None
        match = re.search(r"line (\d+)", str(exc))
        if match:
            line = int(match.group(1))
        return Config(path=path), [Finding.make(
            "config-invalid", shown, f"cannot be read: {exc}",
            "fix the TOML syntax; memtui uses the defaults meanwhile", line=line)]
    findings: list[Finding] = []

    def problem(table: str | None, key: str | None, message: str, fix: str) -> None:
        findings.append(Finding.make("config-invalid", shown, message, fix, line=_line_of(text, table, key)))

    sections: dict[str, Any] = {}
    owners: dict[str, str] = {}
    promotion: dict[str, str] = {}
    environments: dict[str, str] = {}
    for table, value in data.items():
        if table == "promotion":
            promotion = _promotion_table(value, problem)
            continue
        if table == "environments":
            environments.update(_read_environments(value, problem))
            continue
        if table == "owners":
            owners.update(_read_owners(value, problem))
            continue
        kind = _SECTIONS.get(table)
        if kind is None:
            problem(table, None, f"[{table}] is not a memtui setting table",
                    f"use one of {', '.join(['owners', 'promotion', 'environments', *_SECTIONS])}, or delete it")
            continue
        if not isinstance(value, dict):
            problem(None, table, f"{table} must be a table ([{table}])", f"write [{table}] on its own line")
            continue
        sections[table] = kind(**_read_section(table, kind, value, problem))
    return Config(owners=owners, promotion=promotion, environments=environments, path=path, **sections), findings


#: The audit action of :func:`set_setting`.
SET_ACTION = "config.set"


def set_setting(session, table: str, key: str, value: Any, *, client_id: str | None = None):  # noqa: ANN001, ANN201
    """Set ``[table] key = value`` in the workspace's ``memtui.toml`` through the one guarded
    write (:meth:`memtui.core.session.Session.write`), keeping the file's comments and layout
    (tomlkit); the TUI remembers a choice this way (the backup repository).

    The file is read and changed under the write's lock, so a concurrent edit is never lost;
    the new text is checked with :func:`load` before it is written.

    Args:
        session: a writable session.
        table, key: a known setting (a field of the table's dataclass).
        value: a value of the setting's type.

    Returns:
        The :class:`~memtui.core.session.Written` of the write (no entry when unchanged).

    Raises:
        ValueError: an unknown setting, a value of the wrong type, or a file that is not TOML
            (nothing written; fix the file by hand first).
        ReadOnlyError: the session is read-only.
    """
    import tomlkit

    section = _SECTIONS.get(table)
    if section is None or key not in {f.name for f in dataclasses.fields(section)}:
        raise ValueError(f"[{table}] {key} is not a memtui setting")
    hints = typing.get_type_hints(section)
    if not _fits(value, hints[key]):
        raise ValueError(f"[{table}] {key} must be {_type_name(hints[key])}, not {value!r}")
    shown = "memtui.toml"

    def change(tx) -> None:  # noqa: ANN001 - Tx
        data = tx.read(shown)
        try:
            doc = tomlkit.parse(data.decode("utf-8-sig")) if data else tomlkit.document()
        except (UnicodeDecodeError, Exception) as exc:  # tomlkit's own ParseError
            raise ValueError(f"memtui.toml cannot be read ({exc}); fix it by hand, then try again") from exc
        if table not in doc:
            doc[table] = tomlkit.table()
        doc[table][key] = value
        new = tomlkit.dumps(doc).encode("utf-8")
        tx.replace(shown, new, base=None if data is None else tx.sha(shown))
        tx.detail["setting"] = f"[{table}] {key}"

    return session.write(SET_ACTION, shown, change, client_id=client_id,
                         request={"table": table, "key": key, "value": value})
