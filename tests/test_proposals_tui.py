"""The Proposals screen, driven with Textual's Pilot on a copy of the sample workspace."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from memtui.core import governance as gov
from memtui.core.auditlog import AuditLog
from memtui.core.search.index import SearchIndex
from memtui.core.search.query import search
from memtui.core.session import Session
from memtui.core.skills.versions import SkillLedger
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace
from memtui.ui.app import MemtuiApp
from memtui.ui.widgets import AskText, Confirm
from memtui.ui.screens.proposals import ProposalsScreen
from tests.conftest import open_area, wait_for

EXP13 = "support/experience/exp-013-label-printer-blank.md@1"


async def _open(pilot, app) -> ProposalsScreen:
    screen = await open_area(pilot, "7")
    assert isinstance(screen, ProposalsScreen)
    await wait_for(pilot, lambda: screen.current is not None)
    return screen


def _select(screen: ProposalsScreen, version_id: str) -> None:
    table = screen.query_one("#prop-queue", DataTable)
    table.move_cursor(row=[v.id for v in screen._rows].index(version_id))


async def test_approving_a_proposal_end_to_end(sample_copy: Path) -> None:
    ws = Workspace.open(sample_copy)
    SearchIndex(ws).update()
    assert search(SearchIndex(ws), "darkness").total == 0  # a proposal is not searchable
    app = MemtuiApp(ws)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot, app)
        queue = screen.query_one("#prop-queue", DataTable)
        assert queue.row_count == 3
        states = {v.id: str(queue.get_row_at(i)[1]) for i, v in enumerate(screen._rows)}
        assert states[EXP13] == "eligible by uses"
        assert states["support/courier-app/gps-drift.md@2"] == "review only"
        _select(screen, EXP13)
        await pilot.pause()
        assert "+**Fix.** Set darkness back" in str(screen.query_one("#prop-diff", Static).render())
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        assert "acting as support.curator" in app.screen._question
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.current is not None and screen.current.id != EXP13
                       and queue.row_count == 2)
    article = sample_copy / "memory/support/experience/exp-013-label-printer-blank.md"
    assert "Set darkness back" in article.read_text(encoding="utf-8")
    index = MemoryTree(Workspace.open(sample_copy)).index("support/experience")
    assert "support/experience/exp-013-label-printer-blank.md" in [e.path for e in index.entries]
    with Session.open(sample_copy, read_only=True) as s:
        entry = AuditLog(s.store).entries()[0]
        assert (entry.action, entry.profile) == ("governance.activate", "support.curator")
        assert gov.Ledger(s.store).get(EXP13).state == "active"
    hits = search(SearchIndex(Workspace.open(sample_copy)), "darkness")
    assert "memory/support/experience/exp-013-label-printer-blank.md" in [h.path for h in hits.hits]


async def test_refusals_and_reject_with_reason(sample_copy: Path) -> None:
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot, app)
        gps = "support/courier-app/gps-drift.md@2"
        _select(screen, gps)
        await pilot.pause()
        uses = str(screen.query_one("#prop-uses", Static).render())
        assert "subcase of the proposing case CASE-2070" in uses
        assert "⏎" not in uses, "app text went through the user-text sanitiser"
        await pilot.press("a")  # the curator does not own support/courier-app: refused before any question
        await wait_for(pilot, lambda: any("owned by support.courier-app; you act as support.curator"
                                          in str(n.message) for n in app._notifications))
        assert app.screen is screen, "Approve asked for confirmation and then refused"
        _select(screen, "support/experience/exp-014-tracking-mixup.md@1")
        await pilot.pause()
        assert "UNTRUSTED" in str(screen.query_one("#prop-head", Static).render())
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText))
        await pilot.press(*"unconfirmed forum claim")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.query_one("#prop-queue", DataTable).row_count == 2)
    with Session.open(sample_copy, read_only=True) as s:
        led = gov.Ledger(s.store)
        assert led.get(gps).state == "proposed"
        rejected = led.get("support/experience/exp-014-tracking-mixup.md@1")
        assert rejected.state == "rejected" and rejected.decision["why"] == "unconfirmed forum claim"


async def test_history_diff_between_versions_and_tree_states(sample_copy: Path) -> None:
    with Session.open(sample_copy, profile="support.courier-app") as s:
        gov.approve(s, "support/courier-app/gps-drift.md@2", reviewed=True)
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("s")  # all states
        await wait_for(pilot, lambda: screen.query_one("#prop-queue", DataTable).row_count == 4)
        _select(screen, "support/courier-app/gps-drift.md@2")
        await pilot.pause()
        assert [h.state for h in screen._history] == ["retired", "active"]
        assert "+**Check first.**" in screen.history_diff_text()
        assert gov.entry_states(app.ws, "support/courier-app", app.session.store)[
            "support/courier-app/gps-drift.md"] == ("active", 2)


async def test_a_read_only_memtui_refuses_and_says_why(sample_copy: Path) -> None:
    ws = Workspace.open(sample_copy)
    app = MemtuiApp(ws, session=Session.open(ws, purpose="tui", read_only=True))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot, app)
        _select(screen, EXP13)
        await pilot.press("a")
        await wait_for(pilot, lambda: any("--read-only" in str(n.message) for n in app._notifications
                                          if n.title == "Read-only"))
        assert not isinstance(app.screen, Confirm)
    assert not (sample_copy / "memory/support/experience/exp-013-label-printer-blank.md").exists()


async def test_rollback_acts_on_the_version_picked_and_refuses_before_asking(sample_copy: Path) -> None:
    """Rollback acted on the History tab's cursor (the active version), not on the row the owner
    picked, and refused after the confirmation: "version 2 already holds the content of version 2"."""
    gps = "support/courier-app/gps-drift.md"
    with Session.open(sample_copy, profile="support.courier-app") as s:
        gov.approve(s, f"{gps}@2", reviewed=True)
    app = MemtuiApp(Workspace.open(sample_copy), session=Session.open(sample_copy, purpose="tui",
                                                                      profile="support.courier-app"))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("s")  # every state: the active and the retired version are rows
        await wait_for(pilot, lambda: screen.query_one("#prop-queue", DataTable).row_count == 4)
        _select(screen, f"{gps}@2")
        await pilot.pause()
        history = screen.query_one("#prop-history", DataTable)
        history.move_cursor(row=[h.number for h in screen._history].index(2))
        history.focus()  # the History tab's row decides: the active version itself is refused, unasked
        await pilot.press("b")
        await wait_for(pilot, lambda: any("is the active version" in str(n.message) for n in app._notifications))
        assert app.screen is screen
        screen.query_one("#prop-queue", DataTable).focus()  # the active row picked: back to the one before
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        assert "holding version 1's content" in app.screen._question
        await pilot.press("y")
        await wait_for(pilot, lambda: not any(w.group == "proposals-write" and w.is_running for w in app.workers))
    with Session.open(sample_copy, read_only=True) as s:
        active = gov.Ledger(s.store).active(gps)
        assert active is not None and active.number == 3 and active.provenance.get("rollback_of") == 1


async def test_the_approve_question_says_untrusted(sample_copy: Path) -> None:
    """The untrusted mark was in the pane behind the dialog, not in the question answered."""
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot, app)
        _select(screen, "support/experience/exp-014-tracking-mixup.md@1")
        await pilot.pause()
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        assert "UNTRUSTED" in str(app.screen._question)
        await pilot.press("escape")


async def test_retire_asks_for_the_reason_and_records_it(sample_copy: Path) -> None:
    gps = "support/courier-app/gps-drift.md"
    with Session.open(sample_copy, profile="support.courier-app") as s:
        gov.approve(s, f"{gps}@2", reviewed=True)
    app = MemtuiApp(Workspace.open(sample_copy), session=Session.open(sample_copy, purpose="tui",
                                                                      profile="support.courier-app"))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("s")
        await wait_for(pilot, lambda: screen.query_one("#prop-queue", DataTable).row_count == 4)
        _select(screen, f"{gps}@2")
        await pilot.pause()
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, AskText))
        await pilot.press("enter")  # an empty reason is not taken: the question stays
        await pilot.pause()
        assert isinstance(app.screen, AskText)
        await pilot.press(*"drift fixed in app 5.2")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        assert "drift fixed in app 5.2" in app.screen._question
        await pilot.press("y")
        # the toast expires after a few seconds, which a starved test loop can miss: the ledger is the record
        await wait_for(pilot, lambda: any("retire: done" in str(n.message) for n in app._notifications)
                       or gov.Ledger(app.session.store).get(f"{gps}@2").state == "retired",
                       what="the retirement recorded")
    with Session.open(sample_copy, read_only=True) as s:
        retired = gov.Ledger(s.store).get(f"{gps}@2")
    assert retired.state == "retired" and retired.retirement["why"] == "drift fixed in app 5.2"


async def test_promotion_rules_view_shows_both_rules_per_node(sample_copy: Path) -> None:
    from memtui.ui.widgets import ValueViewer

    with Session.open(sample_copy, profile="support.courier-app") as s:
        gov.approve(s, "support/courier-app/gps-drift.md@2", reviewed=True)
    with Session.open(sample_copy, profile="support.curator") as s:
        gov.approve(s, EXP13)
    app = MemtuiApp(Workspace.open(sample_copy))
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(pilot, app)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, ValueViewer))
        text = app.screen._text
        assert "2 promoted versions (1 by two uses, 1 by review)" in text
        for node in ("support/courier-app", "support/experience"):
            assert any(line.startswith(node) and "· by review:" in line for line in text.splitlines())
            assert any(line.startswith(node) and "· by uses:" in line for line in text.splitlines())


async def test_a_skill_proposal_is_a_row_and_is_not_published_untested(sample_copy: Path, tmp_path: Path,
                                                                        capsys) -> None:  # noqa: ANN001
    import json
    import shutil

    from tests.conftest import run_cli

    owner = "support.parcels-lost"
    for argv in (("skills", "bind", "parcel-trace", "support/parcels-lost"), ("skills", "adopt", "parcel-trace")):
        assert run_cli(capsys, *argv[:2], "-w", str(sample_copy), *argv[2:])[0] == 0
    draft = tmp_path / "parcel-trace"
    shutil.copytree(sample_copy / "skills/parcel-trace", draft)
    (draft / "skill-manifest.json").write_text(json.dumps({
        "inputs": [{"name": "waybill"}], "read_set": [{"system": "DepotScan"}],
        "classification": {"outcomes": ["scan gap"]}, "write_packet": {"writes": []},
        "verification": [{"check": "names the last scan"}], "tests": {"command": "python3", "args": ["t.py"]}}))
    with open(draft / "SKILL.md", "a") as fh:
        fh.write("\nAfter 48 hours without a scan, open the depot search.\n")
    code, _, err = run_cli(capsys, "propose", "-w", str(sample_copy), "--skill", "parcel-trace", "--from", str(draft),
                           "--case", "C-1", "--source-request", "SR-1", "--profile", "support.agent")
    assert code == 0, err
    published = (sample_copy / "skills/parcel-trace/SKILL.md").read_text()
    ref = "skill:parcel-trace@2"
    app = MemtuiApp(Workspace.open(sample_copy), session=Session.open(sample_copy, purpose="tui", profile=owner))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot, app)
        await wait_for(pilot, lambda: ref in [v.id for v in screen._rows])
        queue = screen.query_one("#prop-queue", DataTable)
        row = [v.id for v in screen._rows].index(ref)
        assert (str(queue.get_row_at(row)[0]), str(queue.get_row_at(row)[1])) == ("parcel-trace", "skill · not tested")
        _select(screen, ref)
        await wait_for(pilot, lambda: screen.current_skill is not None and screen.current_skill.id == ref)
        diff = str(screen.query_one("#prop-diff", Static).render())
        assert "\n+After 48 hours without a scan" in diff and "⏎" not in diff  # its lines kept
        await pilot.press("a")
        await wait_for(pilot, lambda: any("its tests have not passed on this content" in str(n.message)
                                          for n in app._notifications))
        assert not isinstance(app.screen, Confirm)
        assert SkillLedger(app.session.store).get(ref).state == "proposed"  # nothing published
        await pilot.press("x")  # reject asks for the reason, then confirms
        await wait_for(pilot, lambda: isinstance(app.screen, AskText))
        await pilot.press(*"no depot search here", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_for(pilot, lambda: ref not in [v.id for v in screen._rows])
    assert (sample_copy / "skills/parcel-trace/SKILL.md").read_text() == published
    with Session.open(sample_copy, read_only=True) as s:
        rejected = SkillLedger(s.store).get(ref)
        assert (rejected.state, (rejected.decision or {}).get("why")) == ("rejected", "no depot search here")
