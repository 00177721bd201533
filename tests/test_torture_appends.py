"""Appends made while memtui writes are never lost: an agent appends one entity line to
graph.jsonl every 10 ms while ``memtui graph add-observation`` runs in a loop; no appended line
may be lost.

The reported runs were 1,140 appends on the sample graph and 300 on a 20,000-entity graph
(5.7 MB). The default suite runs a tenth of that; ``MEMTUI_TORTURE_SCALE=100`` is the report's
"10x its run length" (see tests/torture.py).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests import torture
from tests.conftest import SAMPLE

#: Appends of the reported runs: (sample graph, 20,000-entity graph).
ISSUE_RUN = {"sample": 1140, "20k": 300}


@pytest.mark.slow
@pytest.mark.parametrize("size", ["sample", "20k"])
def test_no_line_an_agent_appends_during_saves_is_lost(tmp_path: Path, size: str) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(SAMPLE, ws, symlinks=True)
    graph = ws / "memory" / "graph.jsonl"
    if size == "20k":
        torture.big_graph(graph)
    count = torture.scaled(ISSUE_RUN[size] // 10, least=30)
    tag = f"agent{size}"
    saves = failed = 0
    errors: list[str] = []
    started = time.monotonic()
    agent = torture.start_appender(graph, count, tag)
    try:
        while agent.poll() is None or saves < 3:
            done = torture.memtui("graph", "add-observation", "-w", str(ws), "RouteCore", f"save {saves}")
            saves += 1
            if done.returncode != 0:
                failed += 1
                errors.append(done.stderr.decode("utf-8", "replace").strip())
    finally:
        agent.wait(timeout=600)
    data = graph.read_bytes()
    found = torture.appended_names(data, tag)
    lost = count - len(found)
    observations = sum(1 for n in range(saves) if f'"save {n}"'.encode() in data)
    torture.report("appends-during-saves", graph=size, appended=count, lost=lost, saves=saves,
                   saves_failed=failed, saves_kept=observations, seconds=round(time.monotonic() - started, 1),
                   errors=errors[:3])
    assert lost == 0, f"{lost} of {count} appended lines were lost"
    assert failed == 0, errors[:3]
    assert observations == saves, "every save memtui reported is in the file"
    check = torture.memtui("graph", "check", "--json", "--no-fuzzy", "-w", str(ws))
    assert check.returncode in (0, 1), check.stderr


def test_a_save_that_carried_lines_leaves_no_temporary_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(SAMPLE, ws, symlinks=True)
    graph = ws / "memory" / "graph.jsonl"
    agent = torture.start_appender(graph, 40, "quick", interval=0.005)
    try:
        for n in range(3):
            done = torture.memtui("graph", "add-observation", "-w", str(ws), "RouteCore", f"quick {n}")
            assert done.returncode == 0, done.stderr
    finally:
        agent.wait(timeout=60)
    assert torture.appended_names(graph.read_bytes(), "quick") == {f"quick-{i}" for i in range(40)}
    assert not [p.name for p in graph.parent.iterdir() if p.name.endswith(".tmp")]
