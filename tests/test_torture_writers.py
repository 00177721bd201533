"""Two memtui writers and an outside agent on the same files (torture tests).

Two writer processes save through the one guarded write as fast as they can (graph
observations, member notes), while an agent that takes no lock appends lines to
``graph.jsonl`` and to ``MEMORY_CUSTOM.md``. At the end every line the agent appended, and
every save a writer was told succeeded, is in the files; refused saves are conflicts the
writer was told about; the audit log holds exactly one entry per save; the store is whole.

``MEMTUI_TORTURE_SCALE`` multiplies the run length (tests/torture.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import torture
from tests.conftest import SAMPLE

_WRITER = textwrap.dedent("""
    import json, sys, time
    from memtui.core import graph as g, notes
    from memtui.core.errors import BusyError, ConflictError
    from memtui.core.session import Session
    root, who, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    saved = {"graph": [], "notes": []}
    refused = {"graph": 0, "notes": 0}
    errors = []
    session = Session.open(root, purpose="cli torture " + who, wait=30)
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        marker = f"{who}-{i}"
        try:
            path = session.ws.graph_file
            graph = g.load(path, "memory/graph.jsonl")
            g.commit(path, graph, g.AddObservation("RouteCore", marker), session=session)
            saved["graph"].append(marker)
        except (ConflictError, BusyError):
            refused["graph"] += 1
        except Exception as exc:  # a crash is a failure of the test
            errors.append(f"graph {marker}: {type(exc).__name__}: {exc}")
        try:
            note = notes.load(session.ws)
            notes.save(session, note, note.text.rstrip("\\n") + f"\\n- {marker}\\n", note.hash)
            saved["notes"].append(marker)
        except (ConflictError, BusyError):
            refused["notes"] += 1
        except Exception as exc:
            errors.append(f"notes {marker}: {type(exc).__name__}: {exc}")
    session.close()
    print(json.dumps({"saved": saved, "refused": refused, "errors": errors}))
""")

_AGENT_NOTES = textwrap.dedent("""
    import sys, time
    path, count, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    print("ready", flush=True)
    for i in range(count):
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"- agent-note-{i}\\n")
        time.sleep(interval)
""")


@pytest.mark.slow
def test_two_writers_and_an_agent_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root, symlinks=True)
    graph = root / "memory" / "graph.jsonl"
    notes_file = root / "memory" / "MEMORY_CUSTOM.md"
    graph.write_bytes(graph.read_bytes() + b"\n")  # an agent's append starts a line of its own
    seconds = 3.0 * max(torture.SCALE, 1.0)  # the short run keeps its 3 s: both writers must get to save
    appends = int(seconds / 0.01)
    note_appends = int(seconds / 0.05)
    agent = torture.start_appender(graph, appends, "agent", interval=0.01)
    note_agent = subprocess.Popen([sys.executable, "-c", _AGENT_NOTES, str(notes_file), str(note_appends), "0.05"],
                                  stdout=subprocess.PIPE)
    assert note_agent.stdout is not None and note_agent.stdout.readline().strip() == b"ready"
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(root), who, str(seconds)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=torture.env())
               for who in ("w1", "w2")]
    results = []
    for proc in writers:
        out, err = proc.communicate(timeout=600 + seconds * 4)
        assert proc.returncode == 0, err.decode()[-2000:]
        results.append(json.loads(out))
    agent.wait(timeout=600)
    note_agent.wait(timeout=600)
    graph_bytes, notes_text = graph.read_bytes(), notes_file.read_text(encoding="utf-8")
    saved_graph = [m for r in results for m in r["saved"]["graph"]]
    saved_notes = [m for r in results for m in r["saved"]["notes"]]
    lost_agent = appends - len(torture.appended_names(graph_bytes, "agent"))
    lost_graph = [m for m in saved_graph if f'"{m}"'.encode() not in graph_bytes]
    lost_notes = [m for m in saved_notes if f"- {m}\n" not in notes_text]
    lost_agent_notes = [i for i in range(note_appends) if f"- agent-note-{i}\n" not in notes_text]
    errors = [e for r in results for e in r["errors"]]
    from memtui.core.store import Store

    store = Store.open(root, read_only=True)
    entries = store.table("audit").all()
    store.close()
    graph_entries = sum(1 for e in entries if e["action"] == "graph.add-observation")
    notes_entries = sum(1 for e in entries if e["action"] == "notes.set")
    torture.report("two-writers-and-an-agent", seconds=seconds, graph_saves=len(saved_graph),
                   notes_saves=len(saved_notes), refused={k: sum(r["refused"][k] for r in results) for k in
                                                          ("graph", "notes")},
                   agent_graph_lines=appends, agent_note_lines=note_appends, lost_agent_graph=lost_agent,
                   lost_agent_notes=len(lost_agent_notes), lost_saved_graph=len(lost_graph),
                   lost_saved_notes=len(lost_notes), errors=errors[:5])
    assert not errors, errors[:5]
    assert lost_agent == 0 and not lost_agent_notes, (lost_agent, lost_agent_notes[:5])
    assert not lost_graph and not lost_notes, (lost_graph[:5], lost_notes[:5])
    assert saved_graph and saved_notes, "both writers saved something"
    assert (graph_entries, notes_entries) == (len(saved_graph), len(saved_notes)), "one audit entry per save"
