"""The harvest of one case (what was learned, reused and missing, each candidate classified),
shown from the Sessions and Consolidate areas: a dry run (nothing is proposed; ``memtui harvest
CASE`` files the cross-domain requests), read in a worker, shown as plain text."""

from __future__ import annotations

from memtui.core import harvest
from memtui.ui.screens.base import AreaScreen
from memtui.ui.widgets import ValueViewer


def show_harvest(screen: AreaScreen, case: str) -> None:
    """Harvest ``case`` in a worker of ``screen`` without filing anything, then show the report
    (:func:`memtui.core.harvest.markdown`) in a :class:`ValueViewer`; a case without papers is a
    one-line notice instead. An index that cannot be brought up to date is a toast (``run_core``)."""
    app = screen.app
    screen.notify(f"harvesting case {case}…", markup=False, timeout=3)

    def run() -> harvest.Harvest:
        return harvest.harvest(app.ws, app.session.store, case)

    def done(result: harvest.Harvest) -> None:
        p = result.papers
        if not (p.sessions or p.proposals or p.uses or p.pins):
            screen.notify(f"case {case} has no papers here: no session history, proposal, use or pin names it",
                          severity="warning", markup=False)
            return
        app.push_screen(ValueViewer(f"Harvest of case {case} (nothing proposed)", harvest.markdown(result)))

    screen.run_core(run, done, group="harvest", title="Not harvested")
