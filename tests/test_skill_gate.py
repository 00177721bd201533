"""A skill the modules gate on re-runs its eval set before an amended version is used: publish,
rollback and revert of such a skill are measured on the memory as it will be after the change,
refused on a regression unless it is accepted with a reason, and the evaluation is kept with
the version's provenance and in the audit entry; a skill gated on nothing is unchanged."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.core import evalsets
from memtui.core import governance as gov
from memtui.core.governance import gate
from memtui.core.session import Session
from memtui.core.skills import gating
from memtui.core.skills import versions as sv
from memtui.core.skills.manifest import check_manifest_bytes
from tests.conftest import open_area, run_cli

OWNER = "support.parcels-lost"
NODE = "support/parcels-lost"
SET = f"memory/{NODE}/evals/cases.jsonl"
CASES = [
    {"id": "pl-1", "ticket": "Къде е пратката ми? Tracking has not moved for three days, waybill BP1234567890",
     "language": "mixed", "relevant": ["skill:parcel-trace"]},
    {"id": "pl-2", "ticket": "kude e koletkata, the waybill tracking has not moved since Monday",
     "language": "bg-latn", "relevant": ["skill:parcel-trace"]},
    {"id": "pl-3", "ticket": "The parcel went to the wrong depot, the address is a village with the same name "
                             "as another", "language": "en", "relevant": ["exp-005"]},
]
MANIFEST = {
    "inputs": [{"name": "waybill"}], "read_set": [{"system": "DepotScan"}, {"system": "RouteCore"}],
    "classification": {"outcomes": ["moving", "scan gap"]}, "write_packet": {"writes": []},
    "verification": [{"check": "names the last scan"},
                     {"check": "the lost-parcel tickets still find the trace", "eval_set": NODE}],
    "tests": {"command": "python3", "args": ["test_skill.py"]},
}
TEST = ("import pathlib, sys\n"
        "sys.exit(0 if 'RouteCore' in pathlib.Path('SKILL.md').read_text() else 'no RouteCore')\n")
#: a description that no longer speaks of tracking or of where a parcel is
NARROWED = ("description: Use for courier route questions. Reads the depot scans and the RouteCore stop and "
            "writes a short answer in the customer's language.")


def cli(capsys, ws: Path, *argv: str) -> tuple[int, str, str]:  # noqa: ANN001
    if argv[0] in ("skills", "proposals"):  # a command and its verb
        return run_cli(capsys, *argv[:2], "-w", str(ws), *argv[2:])
    return run_cli(capsys, argv[0], "-w", str(ws), *argv[1:])


def draft(ws: Path, tmp: Path, *, manifest: dict | None = None, narrowed: bool = False) -> Path:
    folder = tmp / "draft" / "parcel-trace"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(ws / "skills/parcel-trace", folder)
    (folder / "skill-manifest.json").write_text(json.dumps(manifest or MANIFEST))
    (folder / "test_skill.py").write_text(TEST)
    if narrowed:
        text = (folder / "SKILL.md").read_text()
        (folder / "SKILL.md").write_text(re.sub(r"description: .*", NARROWED, text).replace(
            "# Trace a parcel", "# Route status answer"))
    return folder


def propose_tested(capsys, ws: Path, folder: Path, n: int) -> str:  # noqa: ANN001
    code, out, err = cli(capsys, ws, "propose", "--skill", "parcel-trace", "--from", str(folder), "--case", f"C-{n}",
                         "--source-request", f"SR-{n}", "--profile", "support.agent", "--json")
    assert code == 0, err
    vid = json.loads(out)["id"]
    assert cli(capsys, ws, "skills", "test", vid.removeprefix("skill:"))[0] == 0
    return vid


def publish(capsys, ws: Path, ref: str, *extra: str) -> tuple[int, str, str]:  # noqa: ANN001
    return cli(capsys, ws, "skills", "publish", ref, "--reviewed", "--as", OWNER, "--yes", *extra)


@pytest.fixture
def bound(sample_copy: Path, capsys) -> Path:  # noqa: ANN001
    """The sample workspace with parcel-trace bound to its node and adopted, and that node's
    eval set (two tickets whose precedent is the skill, one an article's) adopted."""
    ws = sample_copy
    (ws / SET).parent.mkdir()
    (ws / SET).write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CASES))
    assert cli(capsys, ws, "skills", "bind", "parcel-trace", NODE)[0] == 0
    assert cli(capsys, ws, "skills", "adopt", "parcel-trace")[0] == 0
    assert cli(capsys, ws, "adopt", SET.removeprefix("memory/"), "--as", OWNER, "--yes")[0] == 0
    return ws


@pytest.fixture
def gated(bound: Path, tmp_path: Path, capsys) -> Path:  # noqa: ANN001
    """``bound`` with version 2 published: its manifest gates it on the node's eval set."""
    v2 = propose_tested(capsys, bound, draft(bound, tmp_path), 1)
    code, out, err = publish(capsys, bound, v2)
    assert code == 0, err
    return bound


def _record(ws: Path, ref: str) -> sv.SkillVersion:
    with Session.open(ws, read_only=True) as s:
        return sv.SkillLedger(s.store).get(ref)


def test_the_manifest_declares_the_gate_in_its_verification_part() -> None:
    m = check_manifest_bytes(json.dumps(MANIFEST).encode(), "skill-manifest.json")
    assert m.complete, m.findings
    assert gating.gate_sets(m.data) == [NODE]
    assert gating.gate_sets({**MANIFEST, "verification": [{"check": "x"}]}) == []
    bad = check_manifest_bytes(json.dumps({**MANIFEST, "verification": [{"check": "x", "eval_set": 3}]}).encode(), "m")
    assert any(f.code == "skill-manifest-invalid" and "eval_set" in f.message for f in bad.findings)


def test_a_gated_skill_that_loses_its_cases_is_refused_then_accepted_with_a_reason_and_rolled_back(
        gated: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    ws = gated
    v2 = _record(ws, "parcel-trace@2")  # the publication that brought the gate in was measured
    first = v2.provenance["evaluation"]
    assert first["action"] == "publish" and first["domains"][0]["node"] == NODE and not first["regressed"]
    assert any(c["case"] == "pl-1" and c["after_rank"] == 1 for c in first["domains"][0]["changes"])

    v3 = propose_tested(capsys, ws, draft(ws, tmp_path, narrowed=True), 2)
    folder_before = (ws / "skills/parcel-trace/SKILL.md").read_bytes()
    code, out, err = publish(capsys, ws, v3)
    assert code == 3
    assert "pl-2: the precedent was skill:parcel-trace at rank 1, after this change" in out
    assert re.search(r"hit@5 +100\.0% → 33\.3% +worse", out)
    assert "--accept-regression --reason" in err and "Nothing was changed" in err
    assert "measuring support/parcels-lost before the change" in err  # progress
    assert _record(ws, v3).state == "proposed"
    assert (ws / "skills/parcel-trace/SKILL.md").read_bytes() == folder_before
    assert not any((ws / ".memtui/evals").iterdir())  # the scratch copy is gone

    code, _, err = publish(capsys, ws, v3, "--accept-regression")
    assert code == 2 and "needs --reason" in err
    code, out, err = publish(capsys, ws, v3, "--accept-regression", "--reason", "tracing moves to lost-parcel-search")
    assert code == 0, err
    assert "regression accepted: tracing moves to lost-parcel-search" in out
    record = _record(ws, v3).provenance["evaluation"]
    assert record["regressed"] and record["accepted_regression"] and record["by"] == OWNER
    assert record["reason"] == "tracing moves to lost-parcel-search" and "hit@5" in record["domains"][0]["worse"]
    with Session.open(ws, read_only=True) as s:  # the audit entry of the same write carries it
        entry = next(e for e in s.audit.entries(newest_first=True) if e.action == "skills.publish")
        last = evalsets.last_figures(s.store, NODE)
    assert entry.detail["evaluation"]["accepted_regression"] is True
    assert entry.detail["version"] == v3
    assert last is not None and last["by"] == f"publish {v3}"
    code, out, _ = cli(capsys, ws, "skills", "versions", "parcel-trace")
    assert f"{v3}  active" in out and "eval: worse in support/parcels-lost (accepted)" in out
    assert "regression accepted by support.parcels-lost: tracing moves to lost-parcel-search" in out

    code, out, err = cli(capsys, ws, "skills", "rollback", "parcel-trace", "--to", "2", "--as", OWNER, "--yes")
    assert code == 0, err
    assert "pl-2: the precedent skill:parcel-trace was not among the first 30 answers, after this change rank 1" in out
    v4 = _record(ws, "parcel-trace@4")
    assert (v4.state, v4.provenance["kind"], v4.provenance["rollback_of"]) == ("active", "rollback", 2)
    back = v4.provenance["evaluation"]
    assert back["action"] == "rollback" and not back["regressed"]
    assert any(c["case"] == "pl-2" and c["after_rank"] == 1 for c in back["domains"][0]["changes"])
    code, out, _ = cli(capsys, ws, "proposals", "show", "skill:parcel-trace@4")
    assert code == 0 and "evaluation:" in out and "pl-2: the precedent skill:parcel-trace" in out
    code, out, _ = cli(capsys, ws, "proposals", "show", v3, "--json")
    assert code == 0 and json.loads(out)["evaluation"]["accepted_regression"] is True


def test_the_core_publish_refuses_the_regression_too(gated: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    v3 = propose_tested(capsys, gated, draft(gated, tmp_path, narrowed=True), 2)
    with Session.open(gated, profile=OWNER) as s, pytest.raises(gov.RegressionRefused) as caught:
        sv.publish(s, v3, reviewed=True)
    assert any(c.case == "pl-1" and c.worse for d in caught.value.evaluation.domains for c in d.changes)
    assert _record(gated, v3).state == "proposed"
    # a reader previews what publishing it would do, and nothing is recorded
    store = (gated / ".memtui/store.json").read_bytes()
    code, out, _ = cli(capsys, gated, "proposals", "show", v3, "--evaluate")
    assert code == 0 and "evaluation (measured now, if published):" in out and "worse" in out
    assert "+description: Use for courier route questions." in out  # the diff against the published version
    assert (gated / ".memtui/store.json").read_bytes() == store


def test_a_skill_gated_on_nothing_is_published_and_rolled_back_unmeasured(
        bound: Path, tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    def never(*a: object, **k: object) -> None:
        raise AssertionError("a skill gated on nothing is not measured")

    monkeypatch.setattr(gate, "measure", never)
    plain = {**MANIFEST, "verification": [{"check": "names the last scan"}]}
    v2 = propose_tested(capsys, bound, draft(bound, tmp_path, manifest=plain), 1)
    code, out, err = publish(capsys, bound, v2)
    assert code == 0 and "eval set" not in out + err, err
    assert "evaluation" not in _record(bound, v2).provenance
    assert cli(capsys, bound, "skills", "rollback", "parcel-trace", "--to", "1", "--as", OWNER, "--yes")[0] == 0
    assert "evaluation" not in _record(bound, "parcel-trace@3").provenance
    assert not (bound / ".memtui/evals").exists()


def test_an_eval_set_with_unknown_ids_is_a_clear_sentence_and_nothing_is_changed(
        bound: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    (bound / SET).write_text((bound / SET).read_text() + json.dumps(
        {"id": "pl-9", "ticket": "lost", "language": "en", "relevant": ["exp-999", "skill:no-such-skill"]}) + "\n")
    v2 = propose_tested(capsys, bound, draft(bound, tmp_path), 1)
    store = (bound / ".memtui/store.json").read_bytes()
    code, _, err = publish(capsys, bound, v2)
    assert code == 1
    assert ("the eval set of support/parcels-lost that parcel-trace is gated on cannot be run: case pl-9 names "
            "exp-999, skill:no-such-skill, which no article of the memory has as its id") in err
    assert "Nothing was changed" in err
    assert (bound / ".memtui/store.json").read_bytes() == store
    assert _record(bound, v2).state == "proposed"


def test_a_gate_on_a_node_without_an_eval_set_is_a_clear_sentence(bound: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    elsewhere = {**MANIFEST, "verification": [{"check": "x", "eval_set": "support/courier-app"}]}
    v2 = propose_tested(capsys, bound, draft(bound, tmp_path, manifest=elsewhere), 1)
    code, _, err = publish(capsys, bound, v2)
    assert code == 1 and "gated on the eval set of support/courier-app, but memory/support/courier-app/evals/" \
                         "cases.jsonl does not exist" in err
    assert _record(bound, v2).state == "proposed"
    # the governance check names it on the folder's manifest too
    (bound / "skills/parcel-trace/skill-manifest.json").write_text(json.dumps(elsewhere))
    code, out, _ = cli(capsys, bound, "skills", "check", "--governance")
    assert "skill-gate-without-eval-set" in out and "gates the skill on the eval set of support/courier-app" in out


def test_skills_show_names_the_eval_set_a_skill_is_gated_on(gated: Path, capsys) -> None:  # noqa: ANN001
    code, out, _ = cli(capsys, gated, "skills", "show", "parcel-trace")
    assert code == 0 and "gated on:    the eval set of support/parcels-lost" in out
    assert "skill-gate-without-eval-set" not in out


def test_a_revert_of_a_gated_skill_is_measured_and_audited(gated: Path, capsys) -> None:  # noqa: ANN001
    skill_md = gated / "skills/parcel-trace/SKILL.md"
    published = skill_md.read_bytes()
    skill_md.write_text(re.sub(r"description: .*", NARROWED, skill_md.read_text()))  # an agent's edit
    code, out, err = cli(capsys, gated, "skills", "revert", "parcel-trace", "--as", OWNER, "--yes")
    assert code == 0, err
    assert "after this change rank 1" in out and "holds skill:parcel-trace@2 again" in out
    assert skill_md.read_bytes() == published
    with Session.open(gated, read_only=True) as s:
        entry = next(e for e in s.audit.entries(newest_first=True) if e.action == "skills.revert")
    assert entry.detail["evaluation"]["domains"][NODE]["after"] == 1.0


def test_a_publication_killed_while_measured_records_nothing(gated: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    v3 = propose_tested(capsys, gated, draft(gated, tmp_path, narrowed=True), 2)
    store = (gated / ".memtui/store.json").read_bytes()
    folder = (gated / "skills/parcel-trace/SKILL.md").read_bytes()
    proc = subprocess.Popen([sys.executable, "-m", "memtui", "skills", "publish", v3, "--reviewed", "--as", OWNER,
                             "--yes", "--accept-regression", "--reason", "r", "-w", str(gated)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    scratch = gated / ".memtui" / "evals"
    deadline = time.monotonic() + 120
    while not (scratch.is_dir() and any(scratch.iterdir())):  # the evaluation has begun
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert (gated / ".memtui/store.json").read_bytes() == store
    assert (gated / "skills/parcel-trace/SKILL.md").read_bytes() == folder
    assert _record(gated, v3).state == "proposed"
    with Session.open(gated, profile=OWNER) as s:  # the next one clears the leftover and lands
        v = sv.publish(s, v3, reviewed=True, accept_regression="r")
    assert v.provenance["evaluation"]["accepted_regression"] and not any(scratch.iterdir())


async def test_the_proposals_area_asks_why_a_gated_skills_regression_is_accepted_and_both_areas_show_it(
        gated: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from textual.widgets import DataTable, Static, TabbedContent

    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp
    from memtui.ui.screens.proposals import ProposalsScreen
    from memtui.ui.screens.skills import SkillsScreen
    from memtui.ui.widgets import AskText, Confirm
    from tests.conftest import wait_for

    v3 = propose_tested(capsys, gated, draft(gated, tmp_path, narrowed=True), 2)
    app = MemtuiApp(Workspace.open(gated), session=Session.open(gated, purpose="tui", profile=OWNER))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await open_area(pilot, "7")
        assert isinstance(screen, ProposalsScreen)
        await wait_for(pilot, lambda: v3 in [v.id for v in screen._rows])
        screen.query_one("#prop-queue", DataTable).move_cursor(row=[v.id for v in screen._rows].index(v3))
        await wait_for(pilot, lambda: screen.current_skill is not None and screen.current_skill.id == v3)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText), timeout=120)
        shown = str(app.screen._prompt)
        assert "WORSE" in shown and "pl-1: the precedent was skill:parcel-trace at rank 1" in shown
        await pilot.press("escape")  # nothing changes
        await pilot.pause()
        assert _record(gated, v3).state == "proposed"
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText), timeout=120)
        await pilot.press(*"tracing moves", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        assert "Accepted because: tracing moves" in str(app.screen._question)
        await pilot.press("y")
        await wait_for(pilot, lambda: _record(gated, v3).state == "active", timeout=120)
        published = _record(gated, v3)
        assert published.provenance["evaluation"]["reason"] == "tracing moves"
        screen.show(published)
        prov = str(screen.query_one("#prop-prov", Static).render())
        assert "evaluation:" in prov and "pl-1: the precedent was skill:parcel-trace at rank 1" in prov
        skills = await open_area(pilot, "3")
        assert isinstance(skills, SkillsScreen)
        table = skills.query_one("#skills-table", DataTable)
        await wait_for(pilot, lambda: table.row_count > 0 and skills._governance)
        table.move_cursor(row=next(i for i, s in enumerate(skills._rows) if s.key == "parcel-trace" and s.root == "skills"))
        await pilot.press("v")
        assert skills.query_one("#skill-tabs", TabbedContent).active == "tab-versions"
        await wait_for(pilot, lambda: "eval: worse in support/parcels-lost (accepted)"
                       in str(skills.query_one("#skill-governance", Static).render()), timeout=60)
        text = str(skills.query_one("#skill-governance", Static).render())
        assert "regression accepted by support.parcels-lost: tracing moves" in text
        assert "eval: no domain worse" in text  # version 2, the publication that brought the gate in
