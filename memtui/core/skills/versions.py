"""Skill versions governed as articles are (seed 000 Part II §10, §7.4b): a change is a
proposal, the owner of the skill's node publishes it, a published version is immutable, a
rollback publishes the earlier content as a new version, and a case pins the versions it ran.

The governance model is the articles' one, reused rather than copied:

- ownership: :func:`memtui.core.governance.require_owner` on the node the skill is bound to
  (:mod:`memtui.core.skills.binding`);
- promotion: human review, or two independent passing uses —
  :func:`memtui.core.governance.eligibility` over the skill's uses, kept in the same ``uses``
  table as articles' (the version id ``skill:NAME@N`` keeps them apart);
- pins: the same ``pins`` table (``memtui pins`` shows skill pins both ways);
- every step is one :meth:`~memtui.core.session.Session.write` (the lock, the lost-update
  rule, the audit entry), and a publication writes the folder's files as one change.

What differs from an article: a version holds a folder's files (:mod:`memtui.core.skills.content`),
and publishing needs a complete manifest and a passing test run of exactly that content
(seed 000 §10: "its own tests re-run before an amended version is used"), recorded in the
``skill_tests`` table by :func:`record_test`.

Records (``skill_versions``): ``id`` (``skill:NAME@N``), ``skill``, ``node``, ``number``,
``state`` (``proposed``, ``active``, ``retired``, ``rejected``), ``files``, ``executable``
(the paths among them that are executable; absent from versions recorded before modes were
kept, :meth:`SkillVersion.executables`), ``sha256``,
``created``, ``author``, ``provenance`` (``kind``: ``baseline``, ``proposal`` or
``rollback``; ``case``, ``source_request``, ``rollback_of``; for a skill the modules gate on,
``evaluation``: its eval set before and after, :meth:`memtui.core.governance.gate.Evaluation.to_json`,
kept as it became active), ``based_on``, ``base_hash``,
``decision``, ``retirement``.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtui.core import atomic
from memtui.core import governance as gov
from memtui.core.errors import ConflictError, ReadOnlyError
from memtui.core.governance import gate
from memtui.core.skills import gating
from memtui.core.skills.binding import bind, named_node
from memtui.core.skills.content import Content, ContentError, content_hash, read_content, scratch_folder, write_content
from memtui.core.skills.manifest import MANIFEST_FILE, Manifest, check_manifest_bytes, read_manifest
from memtui.core.skills.model import AGENT_ROOT, SKILL_FILE, UPLOAD_PATTERN
from memtui.core.skills.testrun import TestRun, run_tests
from memtui.core.store import Store
from memtui.core.workspace import Workspace

T_SKILL_VERSIONS = "skill_versions"
T_SKILL_TESTS = "skill_tests"

#: The verdicts of a skill use: an article's, and ``skill-defect`` (seed 000 Part II §11).
SKILL_VERDICTS = (*gov.VERDICTS, "skill-defect")

#: The prefix of a skill version id (``skill:parcel-trace@2``).
PREFIX = "skill:"



@dataclass(frozen=True, slots=True)
class SkillVersion:
    """A read-only view of one ``skill_versions`` record (module docstring)."""

    id: str
    skill: str
    node: str
    number: int
    state: str
    files: dict[str, str]
    sha256: str
    created: str
    author: str | None
    provenance: dict[str, Any]
    based_on: int | None
    base_hash: str | None
    decision: dict[str, Any] | None = None
    retirement: dict[str, Any] | None = None
    executable: tuple[str, ...] | None = None
    doc_id: int = 0

    @classmethod
    def from_doc(cls, doc: dict[str, Any], doc_id: int) -> "SkillVersion":
        data: dict[str, Any] = {k: doc.get(k) for k in _FIELDS}
        data["files"] = dict(data.get("files") or {})
        data["provenance"] = dict(data.get("provenance") or {})
        if data.get("executable") is not None:
            data["executable"] = tuple(data["executable"])
        return cls(**data, doc_id=doc_id)

    def executables(self) -> set[str]:
        """The paths of this version that are executable. A version recorded before modes were
        kept names none: then the file its manifest names as the test command is taken as
        executable (it was in the folder it was read from, or its tests could not have run)."""
        if self.executable is not None:
            return set(self.executable) & set(self.files)
        try:
            command = json.loads(self.files.get(MANIFEST_FILE, "")).get("tests", {}).get("command")
        except (ValueError, AttributeError):
            return set()
        if not isinstance(command, str):
            return set()
        path = command[2:] if command.startswith("./") else command
        return {path} if path in self.files else set()

    def as_version(self) -> gov.Version:
        """This version as the articles' :class:`~memtui.core.governance.Version`, for the
        rules they share (:func:`memtui.core.governance.eligibility`)."""
        return gov.Version(self.id, f"{PREFIX}{self.skill}", self.node, self.number, self.state,
                           self.files.get(SKILL_FILE, ""), self.sha256, self.created, self.author, None,
                           self.provenance, self.based_on, self.base_hash, self.skill, "",
                           decision=self.decision, retirement=self.retirement, doc_id=self.doc_id)

    def manifest(self) -> Manifest:
        """The manifest this version holds, checked."""
        data = self.files.get(MANIFEST_FILE)
        place = f"{self.id}:{MANIFEST_FILE}"
        if data is None:
            return read_manifest(Path("/nonexistent-skill-folder"), place)
        return check_manifest_bytes(data.encode("utf-8"), place)

    def to_json(self, files: bool = False) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in _FIELDS}
        data["paths"] = sorted(self.files)
        if not files:
            data.pop("files")
        if data.get("executable") is not None:
            data["executable"] = list(data["executable"])
        return data


_FIELDS = tuple(k for k in SkillVersion.__slots__ if k != "doc_id")


def version_id(name: str, number: int) -> str:
    return f"{PREFIX}{name}@{number}"


def parse_ref(ref: str) -> tuple[str, int | None]:
    """``NAME@N`` or ``skill:NAME@N`` (or ``NAME``) → ``(name, number or None)``.

    Raises:
        GovernanceError: the number is not a whole number of 1 or more.
    """
    text = ref.strip()
    if text.startswith(PREFIX):
        text = text[len(PREFIX):]
    name, _, number = text.partition("@")
    if not number:
        return name, None
    if not number.isdigit() or int(number) < 1:
        raise gov.GovernanceError(f"{ref!r} is not NAME@N with N a version number (1 or more).")
    return name, int(number)


class SkillLedger:
    """Reads of the skill tables of one store (no writes)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _all(self) -> list[SkillVersion]:
        def build(tables: dict[str, dict[str, Any]]) -> list[SkillVersion]:
            docs = tables.get(T_SKILL_VERSIONS, {})
            out = [SkillVersion.from_doc(doc, int(i)) for i, doc in docs.items()]
            return sorted(out, key=lambda v: (v.skill, v.number))
        return self.store.derived("skills.versions", build)

    def versions(self, name: str | None = None) -> list[SkillVersion]:
        """Versions of skill ``name`` (all when ``None``), oldest first."""
        return [v for v in self._all() if name is None or v.skill == name]

    def get(self, ref: str) -> SkillVersion:
        """The version ``ref`` (``NAME@N`` or ``skill:NAME@N``).

        Raises:
            GovernanceError: no such version.
        """
        name, number = parse_ref(ref)
        found = next((v for v in self._all() if v.skill == name and v.number == number), None)
        if found is None:
            raise gov.GovernanceError(f"there is no skill version {ref!r}; `memtui skills versions NAME` lists them.")
        return found

    def active(self, name: str) -> SkillVersion | None:
        return next((v for v in self._all() if v.skill == name and v.state == "active"), None)

    def proposals(self, state: str | None = "proposed") -> list[SkillVersion]:
        return [v for v in self._all() if v.provenance.get("kind") == "proposal" and (state is None or v.state == state)]

    def tests(self, name: str | None = None) -> list[dict[str, Any]]:
        """Recorded test runs (of ``name``), oldest first."""
        def build(tables: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
            docs = tables.get(T_SKILL_TESTS, {})
            return [dict(docs[i]) for i in sorted(docs, key=int)]
        rows = self.store.derived("skills.tests", build)
        return [r for r in rows if name is None or r.get("skill") == name]

    def last_test(self, name: str, sha: str) -> dict[str, Any] | None:
        """The latest recorded run of ``name`` on content ``sha``, or ``None``."""
        found = [r for r in self.tests(name) if r.get("sha256") == sha]
        return found[-1] if found else None

    def test_state(self, version: SkillVersion) -> str:
        """The test state of ``version``'s exact content, as shown to people: ``tests passed``,
        ``tests failed`` (its latest run failed) or ``not tested`` (no run on this content)."""
        last = self.last_test(version.skill, version.sha256)
        return "not tested" if last is None else ("tests passed" if last.get("passed") else "tests failed")

    def passed(self, name: str, sha: str) -> bool:
        """A run on exactly ``sha`` passed, and no later run on it failed."""
        last = self.last_test(name, sha)
        return bool(last and last.get("passed"))


# -- where a skill lives ----------------------------------------------------------------------------
def skill_folder(ws: Workspace, name: str) -> tuple[str, Path]:
    """``(workspace-relative folder, absolute folder)`` of the agent's skill ``name``
    (``skills/NAME``): where a published version is written.

    Raises:
        GovernanceError: ``name`` breaks the upload pattern (seed 002).
        ReadOnlyError: only the administrator's copy exists (``shared-skills/`` is read-only).
    """
    if not UPLOAD_PATTERN.match(name) or name in (".", ".."):
        raise gov.GovernanceError(f"{name!r} is not a skill name (lowercase letters, digits, '.', '_', '-').")
    shown = f"{AGENT_ROOT}/{name}"
    folder = ws.root / AGENT_ROOT / name
    shared = ws.root / "shared-skills" / name
    if not folder.exists() and shared.exists():
        raise ReadOnlyError(f"{name} is the administrator's skill (shared-skills/ is read-only); "
                            "govern it where the administrator publishes it.")
    return shown, folder


def _files_now(ws: Workspace, folder: Path) -> dict[str, str] | None:
    """The folder's files now, ``None`` when absent (raises as :func:`_content_now`)."""
    content = _content_now(ws, folder)
    return None if content is None else content.files


def _content_now(ws: Workspace, folder: Path) -> Content | None:
    """The folder's content now (files and executable bits), ``None`` when absent.

    Raises:
        GovernanceError: it cannot be taken as a version (a link leading outside, a binary file …).
    """
    if not folder.exists() and not folder.is_symlink():
        return None
    try:
        return read_content(folder, confine_to=ws.root)
    except ContentError as exc:
        raise gov.GovernanceError(str(exc)) from exc


def _set_modes(ws: Workspace, version: SkillVersion) -> None:
    """Give the files of ``skills/NAME/`` the executable bits ``version`` records, after it was
    written there (the guarded write carries bytes only; modes are not part of the content hash)."""
    folder = ws.root / AGENT_ROOT / version.skill
    runnable = version.executables()
    for path in version.files:
        target = folder / path
        try:
            mode = os.stat(target, follow_symlinks=False).st_mode & 0o7777
            wanted = (mode | ((mode & 0o444) >> 2)) if path in runnable else (mode & ~0o111)
            if wanted != mode:
                os.chmod(target, wanted)
        except OSError:
            continue


def _node_of(ws: Workspace, folder: Path, files: dict[str, str], name: str) -> str:
    """The node ``files`` bind the skill to.

    Raises:
        RefusedError: it binds to nothing (``skill-unbound``) or to a folder that is not a node.
    """
    binding = bind(ws, folder, files.get(SKILL_FILE), f"{AGENT_ROOT}/{name}/{SKILL_FILE}")
    if binding.node is None:
        assert binding.finding is not None
        raise gov.RefusedError(f"{name}: {binding.finding.message}; {binding.finding.fix}")
    return binding.node


def _record(name: str, number: int, node: str, files: dict[str, str], *, state: str, author: str | None,
            provenance: dict[str, Any], active: SkillVersion | None,
            decision: dict[str, Any] | None = None, executable: Any = ()) -> dict[str, Any]:
    return {"id": version_id(name, number), "skill": name, "node": node, "number": number, "state": state,
            "files": dict(sorted(files.items())), "executable": sorted(set(executable) & set(files)),
            "sha256": content_hash(files), "created": gov.now(),
            "author": author, "provenance": {"case": None, "source_request": None, "human_reviewed": False,
                                             "untrusted": False, **provenance},
            "based_on": active.number if active else None, "base_hash": active.sha256 if active else None,
            "decision": decision, "retirement": None}


def _decision(session: Any, action: str, why: str) -> dict[str, Any]:
    return {"action": action, "by": session.profile, "at": gov.now(), "why": why}


def _next(ledger: SkillLedger, name: str) -> int:
    return max((v.number for v in ledger.versions(name)), default=0) + 1


def _insert(tx: Any, record: dict[str, Any]) -> SkillVersion:
    doc_id = tx.table(T_SKILL_VERSIONS).insert(record)
    return SkillVersion.from_doc(record, doc_id)


def _move(tx: Any, version: SkillVersion, state: str, field_name: str, decision: dict[str, Any]) -> None:
    """The only edit ever made to a skill version: proposed→active/rejected, active→retired."""
    if (version.state, state) not in {("proposed", "active"), ("proposed", "rejected"), ("active", "retired")}:
        raise gov.GovernanceError(f"{version.id} is {version.state}; it cannot become {state} "
                                  "(decided records are never edited).")
    tx.table(T_SKILL_VERSIONS).update({"state": state, field_name: decision}, doc_ids=[version.doc_id])


# -- actions ------------------------------------------------------------------------------------------
def adopt(session: Any, name: str, reason: str = "") -> SkillVersion:
    """Record the skill's folder as it is as its first published version (``baseline``,
    active): the start of its history. Anyone may adopt a baseline (it publishes nothing new);
    the skill must be bound. A skill holding only proposals (recorded before proposing for an
    untracked skill was refused) or rejected ones is adopted as the next number; those
    proposals stay, filed on no published version.

    Raises:
        GovernanceError: the skill has a published (or retired) version already, or its folder
            is missing or unusable.
        RefusedError: it is bound to no node.
    """
    shown, folder = skill_folder(session.ws, name)

    def change(tx: Any) -> SkillVersion:
        ledger = SkillLedger(session.store)
        if any(v.state in ("active", "retired") for v in ledger.versions(name)):
            raise gov.GovernanceError(f"{name} has recorded versions already; `memtui skills versions {name}` lists them.")
        content = _content_now(session.ws, folder)
        if content is None or not content.files:
            raise gov.GovernanceError(f"{shown} holds no skill to adopt.")
        files = content.files
        node = _node_of(session.ws, folder, files, name)
        record = _record(name, _next(ledger, name), node, files, state="active", author=session.profile,
                         provenance={"kind": "baseline"}, active=None,
                         decision=_decision(session, "adopt", reason or "baseline"), executable=content.executable)
        version = _insert(tx, record)
        tx.hashes(None, version.sha256)
        tx.detail.update({"version": version.id, "node": node, "provenance": "baseline"})
        return version

    return session.write("skills.adopt", shown, change, request={"skill": name, "reason": reason}).result


def propose(session: Any, name: str, files: dict[str, str], *, case: str, source_request: str, profile: str,
            sources: list[str] | tuple[str, ...] = (), client_id: str | None = None,
            executable: Any = ()) -> SkillVersion:
    """File a skill change: a candidate version of skill ``name`` holding ``files`` (a
    folder's content; ``executable``: the paths among them that are executable). Anyone may
    propose; nothing in ``skills/`` changes until the owner publishes it.

    Raises:
        GovernanceError: no ``SKILL.md`` in it, missing case or source request or profile,
            content identical to the published version; the skill's folder exists but is
            untracked (no version recorded: it must be adopted first, or its publication
            would be refused; nothing is filed).
        RefusedError: the content binds the skill to no node.
    """
    if SKILL_FILE not in files:
        raise gov.GovernanceError(f"the proposed folder holds no {SKILL_FILE}; nothing was filed.")
    if not case.strip() or not source_request.strip():
        raise gov.GovernanceError("a proposal needs its case id and source-request id (provenance).")
    if not profile.strip():
        raise gov.GovernanceError("a proposal needs the authoring --profile.")
    shown, folder = skill_folder(session.ws, name)
    sha = content_hash(files)

    def change(tx: Any) -> SkillVersion:
        ledger = SkillLedger(session.store)
        active = ledger.active(name)
        if active is not None and active.sha256 == sha:
            raise gov.GovernanceError(f"the proposed content is the published version {active.id}; nothing was filed.")
        if active is None and _files_now(session.ws, folder):
            raise gov.GovernanceError(f"{shown} exists but is untracked; adopt it first (`memtui skills adopt {name}`) "
                                      "so its current content is kept as a version, then propose the change; "
                                      "nothing was filed.")
        node = _node_of(session.ws, folder, files, name)
        record = _record(name, _next(ledger, name), node, files, state="proposed", author=profile.strip(),
                         provenance={"kind": "proposal", "case": case.strip(),
                                     "source_request": source_request.strip(),
                                     "sources": [s for s in sources if s]}, active=active, executable=executable)
        version = _insert(tx, record)
        tx.hashes(None, version.sha256)
        tx.detail.update({"version": version.id, "node": node, "case": case.strip()})
        return version

    done = session.write("skills.propose", shown, change, client_id=client_id,
                         request={"skill": name, "sha256": sha, "case": case.strip(),
                                  "source_request": source_request.strip(), "profile": profile.strip()})
    if done.retried:
        return SkillLedger(session.store).get(done.entry.detail["version"])
    return done.result


def test(session: Any, ref: str, *, timeout: float | None = None) -> tuple[dict[str, Any], TestRun]:
    """Run the tests of a skill (``NAME``: its folder as it is; ``NAME@N``: that version, in a
    scratch copy) and record the result bound to the content hash (one guarded write,
    ``skills.test``). The run itself happens before the write, holding no lock.

    Returns:
        ``(the recorded row, the run)``.

    Raises:
        GovernanceError: no such version, the folder is unusable, or the manifest names no
            valid tests (nothing is run). ConfinementError-like RefusedError: the folder is a
            link leading outside the workspace. RunRefused: the command cannot be run.
    """
    from memtui.core.skills.testrun import RunRefused

    ws = session.ws
    name, number = parse_ref(ref)
    with contextlib.ExitStack() as stack:
        if number is None:
            try:
                shown, folder = skill_folder(ws, name)
            except ReadOnlyError:  # the administrator's copy: testing it writes nothing there
                shown, folder = f"shared-skills/{name}", ws.root / "shared-skills" / name
            if folder.is_symlink() and not _inside(ws, folder):
                raise gov.RefusedError(f"{shown} is a symbolic link leading outside the workspace; memtui runs "
                                       "nothing there")
            files = _files_now(ws, folder)
            if files is None:
                raise gov.GovernanceError(f"{shown} does not exist.")
            version = None
            where = folder
        else:
            version = SkillLedger(session.store).get(ref)
            files = version.files
            where = stack.enter_context(scratch_folder()) / name
            write_content(files, where, version.executables())
        manifest = check_manifest_bytes(files[MANIFEST_FILE].encode("utf-8"), MANIFEST_FILE) \
            if MANIFEST_FILE in files else None
        spec = manifest.tests if manifest is not None else None
        if spec is None:
            raise RunRefused(f"{name} names no tests: its {MANIFEST_FILE} needs `tests` with a command "
                             "(and args); nothing was run")
        sha = content_hash(files)
        run = run_tests(where, spec, watch=ws.root, timeout=timeout)
    row = {"skill": name, "sha256": sha, "version": version.id if version else None, **run.to_json(),
           "time": gov.now(), "by": session.profile}

    def change(tx: Any) -> dict[str, Any]:
        tx.table(T_SKILL_TESTS).insert(row)
        tx.hashes(None, sha)
        tx.detail.update({"skill": name, "version": row["version"], "passed": run.passed, "why": run.why()})
        return row

    session.write("skills.test", f"{AGENT_ROOT}/{name}", change, request={"skill": name, "sha256": sha,
                                                                         "time": row["time"]})
    return row, run


def _inside(ws: Workspace, path: Path) -> bool:
    from memtui.core.files import is_inside

    return is_inside(ws.root, path)


def check_publish(session: Any, ref: str, *, reviewed: bool = False) -> SkillVersion:
    """Every check :func:`publish` makes, before anyone is asked to confirm (owner, state,
    manifest, test run on this content, review or uses, base, the folder on disk).

    Raises:
        RefusedError: not the owner; the manifest is incomplete (the part named); no passing
            test on this content; not reviewed and not eligible by uses (``NeedsReview``).
        GovernanceError: not a proposal, or filed on an older version than the one published now.
        ConflictError: the folder differs from the published version (or is untracked).
    """
    ledger = SkillLedger(session.store)
    version = ledger.get(ref)
    gov.require_owner(session, version.node, f"publish the skill {version.skill}")
    active = ledger.active(version.skill)
    if active is not None and active.node != version.node:
        gov.require_owner(session, active.node, f"move the skill {version.skill} to another node")
    if version.state != "proposed":
        raise gov.GovernanceError(f"{version.id} is {version.state}, not a proposal; published versions are never edited.")
    if active is not None and version.based_on != active.number:
        raise gov.GovernanceError(f"{version.id} was filed on @{version.based_on or 'none'} but "
                                  f"{active.id} is published now: propose the change again on it")
    manifest = version.manifest()
    if not manifest.complete:
        raise gov.RefusedError(f"{version.id} cannot be published: {manifest.why_not()}")
    last = ledger.last_test(version.skill, version.sha256)
    if last is None:
        raise gov.RefusedError(f"{version.id} cannot be published: its tests have not passed on this content "
                               f"({version.sha256[:12]}); run `memtui skills test {version.skill}@{version.number}`")
    if not last.get("passed"):
        raise gov.RefusedError(f"{version.id} cannot be published: its last test run on this content failed "
                               f"({last.get('why')}); correct it and propose again")
    verdict = gov.eligibility(gov.Ledger(session.store), version.as_version())
    if not verdict.by_uses and not reviewed:
        raise gov.NeedsReview(f"{version.id} is not eligible by uses ({'; '.join(verdict.reasons)}); only human "
                              "review promotes it: review the diff, then publish it as reviewed")
    _check_folder(session.ws, version.skill, active)
    return version


def _check_folder(ws: Workspace, name: str, active: SkillVersion | None) -> dict[str, str] | None:
    """The folder's files, when they are the published version's (or absent with nothing published).

    Raises:
        ConflictError: an unrecorded edit, or an untracked folder.
    """
    shown, folder = skill_folder(ws, name)
    files = _files_now(ws, folder)
    if active is None and files:
        raise ConflictError(f"{shown} exists but is untracked; adopt it first (`memtui skills adopt {name}`) "
                            "so its current content is kept as a version.")
    if active is not None and (files is None or content_hash(files) != active.sha256):
        raise ConflictError(f"{shown} differs from its published version {active.id} (an unrecorded edit); "
                            f"put it back (`memtui skills revert {name}`) or propose the change.")
    return files


def _write_folder(tx: Any, shown: str, old: dict[str, str], new: dict[str, str]) -> None:
    """Replace the files ``old`` with ``new`` under ``shown``, each checked against what it holds."""
    for path in sorted(set(old) | set(new)):
        target = f"{shown}/{path}"
        current = tx.read(target)
        data = new[path].encode("utf-8") if path in new else None
        tx.replace(target, data, base=None if current is None else atomic.sha256(current))


def _activate(tx: Any, version: SkillVersion, active: SkillVersion | None, action: str, why: str,
              extra: dict[str, Any] | None = None, evaluation: dict[str, Any] | None = None) -> SkillVersion:
    session = tx.session
    shown, _folder = skill_folder(session.ws, version.skill)
    _check_folder(session.ws, version.skill, active)
    _write_folder(tx, shown, active.files if active else {}, version.files)
    if active is not None:
        _move(tx, active, "retired", "retirement", {**_decision(session, "retire", f"superseded by version {version.number}"),
                                                    "superseded_by": version.id})
    _move(tx, version, "active", "decision", {**_decision(session, action, why), **(extra or {})})
    if evaluation:  # kept with the provenance as it becomes active (seed 000 §7.4b), never after
        tx.table(T_SKILL_VERSIONS).update({"provenance": {**version.provenance, "evaluation": evaluation}},
                                          doc_ids=[version.doc_id])
    tx.hashes(active.sha256 if active else None, version.sha256)
    tx.detail.update({"version": version.id, "retired": active.id if active else None, **(extra or {})})
    return SkillLedger(session.store).get(version.id)


def publish(session: Any, ref: str, *, reviewed: bool = False, why: str = "",
            accept_regression: str | None = None, evaluation: Any = None,
            progress: gate.Progress | None = None) -> SkillVersion:
    """Publish a skill proposal: its files are written to ``skills/NAME/`` (one change), the
    previous version retired. Owner only; checks as :func:`check_publish`.

    A skill the modules gate on (:mod:`memtui.core.skills.gating`) re-runs its eval set first,
    on the memory as it will be after the publication, beside the figures before (seed 000
    Part II §10); the evaluation is kept in the version's provenance and the audit entry, in
    the same guarded write. A skill gated on nothing is published without one.

    Args:
        accept_regression: the reason a publication that makes the gate's figures worse is
            made anyway; without it such a publication is refused.
        evaluation: an :func:`evaluate_change` made beforehand (shown to the person who
            confirms); ``None`` measures here; :data:`memtui.core.governance.gate.SKIP` none.
        progress: told each stage of the evaluation.

    Returns:
        The published :class:`SkillVersion`.

    Raises:
        As :func:`check_publish`; RegressionRefused: worse figures not accepted with a reason;
        memtui.core.evalsets.EvalSetError: the gate's eval set cannot be run.
    """
    name = parse_ref(ref)[0]

    def act(ev: Any) -> SkillVersion:
        def change(tx: Any) -> SkillVersion:
            version = check_publish(session, ref, reviewed=reviewed)
            record = gate.inside(tx, ev, accept_regression)
            active = SkillLedger(session.store).active(version.skill)
            how = "human review" if reviewed else "uses"
            return _activate(tx, version, active, "publish", why or f"published after {how}; tests passed on "
                             f"{version.sha256[:12]}", {"human_reviewed": bool(reviewed)}, evaluation=record)

        done = session.write("skills.publish", f"{AGENT_ROOT}/{name}", change,
                             request={"version": ref, "reviewed": bool(reviewed), "why": why}).result
        _set_modes(session.ws, done)
        return done

    if evaluation is not gate.SKIP:
        check_publish(session, ref, reviewed=reviewed)  # refused before anything is measured
    return gate.run(session, lambda: evaluate_change(session, "publish", name, ref=ref, reviewed=reviewed,
                                                     progress=progress), act, evaluation, accept_regression)


def reject(session: Any, ref: str, reason: str) -> SkillVersion:
    """Reject a skill proposal with a reason; owner only. The record stays, decided."""
    if not (reason or "").strip():
        raise gov.GovernanceError("rejecting needs a reason; nothing was recorded.")
    name = parse_ref(ref)[0]

    def change(tx: Any) -> SkillVersion:
        version = SkillLedger(session.store).get(ref)
        gov.require_owner(session, version.node, f"reject proposals for the skill {name}")
        _move(tx, version, "rejected", "decision", _decision(session, "reject", reason.strip()))
        tx.hashes(None, version.sha256)
        tx.detail.update({"version": version.id, "reason": reason.strip()})
        return SkillLedger(session.store).get(version.id)

    return session.write("skills.reject", f"{AGENT_ROOT}/{name}", change,
                         request={"version": ref, "reason": reason.strip()}).result


def check_rollback(session: Any, name: str, to: int) -> SkillVersion:
    """The version whose content a rollback to ``to`` publishes again (checks as :func:`rollback`)."""
    ledger = SkillLedger(session.store)
    target = next((v for v in ledger.versions(name) if v.number == to), None)
    if target is None or target.state not in ("active", "retired"):
        raise gov.GovernanceError(f"{name} has no published version {to} to roll back to; "
                                  f"`memtui skills versions {name}` lists them.")
    active = ledger.active(name)
    gov.require_owner(session, (active or target).node, f"roll back the skill {name}")
    if active is not None and active.sha256 == target.sha256:
        raise gov.GovernanceError(f"the published version {active.number} of {name} already holds the content of "
                                  f"version {to}: nothing would change.")
    return target


def rollback(session: Any, name: str, to: int, reason: str = "", *, accept_regression: str | None = None,
             evaluation: Any = None, progress: gate.Progress | None = None) -> SkillVersion:
    """Publish a new version holding version ``to``'s files (provenance ``rollback``,
    ``rollback_of``); nothing earlier is edited (seed 000 §10: "rollback is selecting the
    previous version"). Owner only. Its content was published before, so no new test run is
    asked for; a gated skill's eval set is re-run, and the new version carries its
    evaluation (``accept_regression``, ``evaluation``, ``progress`` as for :func:`publish`).

    Raises:
        GovernanceError: no such published version, or it is the published content already.
        RefusedError: not the owner. ConflictError: an unrecorded edit in the folder.
        RegressionRefused, EvalSetError: as :func:`publish`.
    """
    def act(ev: Any) -> SkillVersion:
        def change(tx: Any) -> SkillVersion:
            ledger = SkillLedger(session.store)
            target = check_rollback(session, name, to)
            measured = gate.inside(tx, ev, accept_regression)
            active = ledger.active(name)
            record = _record(name, _next(ledger, name), target.node, target.files, state="proposed",
                             author=session.profile, active=active, executable=target.executables(),
                             provenance={"kind": "rollback", "rollback_of": to, "human_reviewed": True,
                                         **({"evaluation": measured} if measured else {})})
            version = _insert(tx, record)
            return _activate(tx, version, active, "rollback", reason or f"rollback to version {to}",
                             {"rollback_of": to})

        done = session.write("skills.rollback", f"{AGENT_ROOT}/{name}", change,
                             request={"skill": name, "to": to, "reason": reason}).result
        _set_modes(session.ws, done)
        return done

    return gate.run(session, lambda: evaluate_change(session, "rollback", name, to=to, progress=progress),
                    act, evaluation, accept_regression)


def check_revert(session: Any, name: str) -> tuple[SkillVersion, dict[str, str]]:
    """``(the published version, the folder's files now)`` for :func:`revert`, with its checks.

    Raises:
        GovernanceError: nothing published, or the folder holds it already. RefusedError: not the owner.
    """
    active = SkillLedger(session.store).active(name)
    if active is None:
        raise gov.GovernanceError(f"{name} has no published version to put back.")
    gov.require_owner(session, active.node, f"revert the skill {name}")
    shown, folder = skill_folder(session.ws, name)
    now = _files_now(session.ws, folder) or {}
    if content_hash(now) == active.sha256:
        raise gov.GovernanceError(f"{shown} already holds its published version {active.id}.")
    return active, now


def revert(session: Any, name: str, *, accept_regression: str | None = None, evaluation: Any = None,
           progress: gate.Progress | None = None) -> SkillVersion:
    """Put the published version's files back over an unrecorded edit of the folder (owner only).
    A gated skill's eval set is re-run first (the folder as edited, then as published); no
    version is written, so its evaluation is kept in the audit entry (``accept_regression``,
    ``evaluation``, ``progress`` as for :func:`publish`).

    Raises:
        As :func:`check_revert`; RegressionRefused, EvalSetError: as :func:`publish`.
    """
    def act(ev: Any) -> SkillVersion:
        def change(tx: Any) -> SkillVersion:
            active, now = check_revert(session, name)
            gate.inside(tx, ev, accept_regression)
            _write_folder(tx, f"{AGENT_ROOT}/{name}", now, active.files)
            tx.hashes(content_hash(now), active.sha256)
            tx.detail["version"] = active.id
            return active

        done = session.write("skills.revert", f"{AGENT_ROOT}/{name}", change, request={"skill": name}).result
        _set_modes(session.ws, done)
        return done

    return gate.run(session, lambda: evaluate_change(session, "revert", name, progress=progress),
                    act, evaluation, accept_regression)


def evaluate_change(session: Any, action: str, name: str, *, ref: str | None = None, to: int | None = None,
                    reviewed: bool = False, progress: gate.Progress | None = None,
                    as_profile: str | None = None) -> gate.Evaluation | None:
    """Measure what a change of a gated skill would do to the eval sets it is gated on, without
    making it (:func:`memtui.core.governance.gate.measure`): ``publish`` (``ref``),
    ``rollback`` (``to``) or ``revert``. The sets are those the manifest of the content
    published now and of the content it replaces name (:mod:`memtui.core.skills.gating`).

    Returns:
        The :class:`~memtui.core.governance.gate.Evaluation`, or ``None`` when the skill is gated
        on no eval set (nothing is measured).

    Raises:
        memtui.core.evalsets.EvalSetError: a set it is gated on is missing, unreadable, empty or
            names unknown ids. Whatever the change itself would raise (not the owner …).
    """
    ledger = SkillLedger(session.store)
    active = ledger.active(name)
    if action == "publish":
        new = ledger.get(str(ref)).files
        target = ledger.get(str(ref)).id

        def replay(s: Any) -> Any:
            return publish(s, str(ref), reviewed=reviewed, evaluation=gate.SKIP)
    elif action == "rollback":
        new = check_rollback(session, name, int(to or 0)).files
        target = f"{name} back to @{to}"

        def replay(s: Any) -> Any:
            return rollback(s, name, int(to or 0), evaluation=gate.SKIP)
    elif action == "revert":
        new = (active.files if active else {})
        target = f"{name} back to {active.id if active else '?'}"
        replaced = check_revert(session, name)[1]

        def replay(s: Any) -> Any:
            return revert(s, name, evaluation=gate.SKIP)
    else:
        raise ValueError(f"no evaluation for {action!r}")
    old = replaced if action == "revert" else (active.files if active else {})
    sets = list(dict.fromkeys([*gating.files_gate_sets(new), *gating.files_gate_sets(old)]))
    if not sets:
        return None
    gating.check_sets(session.ws, sets, name)
    return gate.measure(session, action, target, [], replay, progress, sets=tuple(sets), profile=as_profile)


def use(session: Any, ref: str, *, case: str, source_request: str, verdict: str | None = None,
        check: str | None = None, client_id: str | None = None) -> dict[str, Any]:
    """Record that ``case`` ran the skill version ``ref``: a pin (seed 000 §10: "a running
    case keeps the version it started with"), and with a ``verdict`` and the independent
    ``check`` a use that counts for the two-uses rule as an article's does; the verdict
    ``skill-defect`` marks the case as having met a defect of this version (seed 000 §11: it
    closes with the delivered work, the amended skill and a memory entry;
    :mod:`memtui.core.consolidate.defects`).

    Returns:
        ``{"pin": {...}, "use": {...} or None}``.

    Raises:
        GovernanceError: unknown version, missing case or source request, a verdict without
            its check or a verdict outside ``pass``/``contradiction``.
    """
    if not case.strip() or not source_request.strip():
        raise gov.GovernanceError("a use needs its case id and source-request id.")
    if verdict is not None and verdict not in SKILL_VERDICTS:
        raise gov.GovernanceError(f"verdict must be one of {', '.join(SKILL_VERDICTS)}, not {verdict!r}.")
    if verdict is not None and not (check or "").strip():
        raise gov.GovernanceError("a use with a verdict needs the independent check performed (--check).")
    version = SkillLedger(session.store).get(ref)

    def change(tx: Any) -> dict[str, Any]:
        now = gov.now()
        pin = {"case": case.strip(), "version": version.id, "hash": version.sha256, "time": now}
        tx.table(gov.T_PINS).insert(pin)
        record = None
        if verdict is not None:
            record = gov.Use(version.id, version.sha256, case.strip(), source_request.strip(), "independent", None,
                             (check or "").strip(), verdict, now, session.profile).to_json()
            tx.table(gov.T_USES).insert(record)
        tx.hashes(None, version.sha256)
        tx.detail.update({"version": version.id, "case": case.strip(), "verdict": verdict})
        return {"pin": pin, "use": record}

    done = session.write("skills.use", f"{AGENT_ROOT}/{version.skill}", change, client_id=client_id,
                         request={"version": version.id, "case": case.strip(), "source_request": source_request.strip(),
                                  "verdict": verdict, "check": check})
    if done.retried:
        return {"pin": {"case": case.strip(), "version": version.id, "hash": version.sha256,
                        "time": done.entry.time}, "use": None}
    return done.result


def diff(ledger: SkillLedger, name: str, a: int, b: int) -> str:
    """The unified diff (difflib) from version ``a`` to ``b`` of skill ``name``, file by file.

    Raises:
        GovernanceError: no such version.
    """
    va, vb = ledger.get(version_id(name, a)), ledger.get(version_id(name, b))
    out: list[str] = []
    for path in sorted(set(va.files) | set(vb.files)):
        old, new = va.files.get(path), vb.files.get(path)
        if old == new:
            continue
        out.extend(difflib.unified_diff(
            (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
            fromfile=f"{va.id}/{path}" if old is not None else "/dev/null",
            tofile=f"{vb.id}/{path}" if new is not None else "/dev/null"))
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
    return "".join(out)


def pinned_state(store: Store, version_ref: str) -> tuple[str, str | None, str, str | None]:
    """For a pin of a skill version: ``(state, skill name, sha256, the published id when
    another)``; ``("unknown", None, "", None)`` when no such version is recorded."""
    ledger = SkillLedger(store)
    try:
        version = ledger.get(version_ref)
    except gov.GovernanceError:
        return "unknown", None, "", None
    active = ledger.active(version.skill)
    return (version.state, version.skill, version.sha256,
            active.id if active is not None and active.id != version.id else None)


__all__ = ["PREFIX", "SkillLedger", "SkillVersion", "T_SKILL_TESTS", "T_SKILL_VERSIONS", "adopt", "check_publish",
           "check_revert", "check_rollback", "diff", "evaluate_change", "named_node", "parse_ref", "pinned_state", "propose", "publish", "reject",
           "revert", "rollback", "skill_folder", "test", "use", "version_id"]
