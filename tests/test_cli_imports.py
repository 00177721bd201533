"""A command that draws nothing loads no drawing library, and a command that does not search or
talk to a remote graph loads neither the search engine nor the HTTP client: an agent calls
memtui as a tool, in a fresh process each time, and pays every import."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Runs one command in this fresh process and prints its exit code and the top-level packages
#: it loaded among those watched.
PROBE = """
import json, sys
from memtui.cli import main
code = main(sys.argv[1:])
watched = {"textual", "rich", "whoosh", "httpx", "rapidfuzz", "pygments"}
loaded = {m.split(".")[0] for m, module in list(sys.modules.items()) if module is not None}
print(json.dumps({"code": code, "loaded": sorted(loaded & watched)}))
"""


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(ROOT / "sample_workspace", target)
    return target


def _loaded(*argv: str, stdin: str | None = None) -> tuple[int, list[str]]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], input=stdin, capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    last = json.loads(out.stdout.strip().splitlines()[-1])
    return last["code"], last["loaded"]


def test_writing_commands_load_no_drawing_search_or_http_library(ws: Path, tmp_path: Path) -> None:
    article = tmp_path / "article.md"
    article.write_text("---\ntitle: Tunnel fix\nsummary: a phone loses its fix\n---\n# Tunnel fix\n\nText.\n", "utf-8")
    notes = (ws / "memory" / "MEMORY_CUSTOM.md").read_text("utf-8")
    calls = [
        (["propose", "-w", str(ws), "--node", "support/courier-app", "--article", "tunnel-fix.md", "--from",
          str(article), "--case", "CASE-1", "--source-request", "SR-1", "--profile", "support.investigator"], None),
        (["use", "-w", str(ws), "--version", "support/courier-app/gps-drift.md@1", "--case", "CASE-2",
          "--source-request", "SR-2", "--verdict", "pass", "--check", "checked"], None),
        (["notes", "set", "-w", str(ws), "--from", "-"], notes + "- one more line\n"),
        (["graph", "add-observation", "-w", str(ws), "RouteCore", "answers slowly at night"], None),
        (["notes", "show", "-w", str(ws)], None),
    ]
    for argv, stdin in calls:
        code, loaded = _loaded(*argv, stdin=stdin)
        assert code == 0, argv
        assert loaded == [], f"{' '.join(argv[:2])} loaded {loaded}"
    # the writes happened (the probe ran the real commands)
    assert "- one more line" in (ws / "memory" / "MEMORY_CUSTOM.md").read_text("utf-8")
    assert "answers slowly at night" in (ws / "memory" / "graph.jsonl").read_text("utf-8")


def test_search_loads_the_engine_but_no_drawing_or_http_library(ws: Path) -> None:
    code, loaded = _loaded("search", "-w", str(ws), "parcel")
    assert code == 0
    assert "whoosh" in loaded  # the probe sees what a search needs
    assert not {"textual", "rich", "httpx", "pygments"} & set(loaded)


#: Runs one command in this fresh process and prints which of the modules named on the
#: first line it loaded.
MODULES_PROBE = """
import json, sys
watched = sys.argv[1].split(",")
from memtui.cli import main
code = main(sys.argv[2:])
print(json.dumps({"code": code, "loaded": sorted(m for m in watched if m in sys.modules)}))
"""


def test_a_typed_search_loads_only_what_it_uses(ws: Path) -> None:
    """Whoosh's import drags in modules a search never calls (urllib.request with http.client,
    ssl and email for a download helper; the cached_property package, which loads asyncio;
    the English morphology tables of a query memtui never builds); a typed query needs no
    mail parser, no fuzzy matcher and no process pool; a workspace without a store has no
    governance marks to read."""
    (ws / ".memtui" / "store.json").unlink()
    watched = ["asyncio", "ssl", "http.client", "urllib.request", "email", "cached_property", "multiprocessing",
               "rapidfuzz", "mailparser_reply", "whoosh.lang.morph_en", "whoosh.qparser",
               "memtui.core.governance", "whoosh.searching"]
    out = subprocess.run([sys.executable, "-c", MODULES_PROBE, ",".join(watched), "search", "-w", str(ws), "parcel"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last["code"] in (0, 1), out.stderr
    assert last["loaded"] == ["whoosh.searching"]  # the probe sees what a search needs


def _prints_ok(code: str) -> None:
    """Run ``code`` in a fresh interpreter from the checkout; it must print ``ok``."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


def test_no_stand_in_is_placed_while_another_thread_runs() -> None:
    """In the TUI another thread imports while the index worker imports Whoosh (the first
    audit's secret scanner imports requests, which imports urllib.request): a stand-in in
    sys.modules then made that import fail. With another thread running, the real modules are
    imported and no stand-in is ever in sys.modules."""
    code = ("import sys, threading, time\n"
            "seen = []\n"
            "stop = threading.Event()\n"
            "def watch():\n"
            "    while not stop.is_set():\n"
            "        m = sys.modules.get('urllib.request')\n"
            "        if m is not None and 'stand-in' in (m.__doc__ or ''): seen.append(m)\n"
            "        time.sleep(0)\n"
            "t = threading.Thread(target=watch); t.start()\n"
            "from memtui.core.search.engine.lean import import_whoosh\n"
            "import_whoosh(); stop.set(); t.join()\n"
            "import urllib.request\n"
            "assert not seen and hasattr(urllib.request, 'getproxies')\n"
            "print('ok')")
    _prints_ok(code)


def test_the_stand_ins_leave_the_real_modules_importable() -> None:
    """After Whoosh is imported with stand-ins, importing the real modules gives the real
    ones, and Whoosh's deferred helpers reach them."""
    code = ("import sys; import memtui.core.search.engine.index\n"
            "assert 'urllib.request' not in sys.modules and 'whoosh.lang.morph_en' not in sys.modules\n"
            "import urllib.request, cached_property, whoosh.lang.morph_en, whoosh.compat\n"
            "assert hasattr(urllib.request, 'Request') and hasattr(cached_property, 'threaded_cached_property')\n"
            "assert 'pulled' in whoosh.query.terms.variations('pull')\n"
            "print('ok')")
    _prints_ok(code)
