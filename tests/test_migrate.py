"""``memtui migrate``: the inventory, classify, rewrite, index and gate passes on the generated
inherited corpus, and the bad inputs they must survive."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from memtui.core import classify, migrate
from memtui.core.governance import Ledger
from memtui.core.session import Session
from tests.conftest import run_cli
from tests.v1corpus import FAIL_DOMAIN, PASS_DOMAIN, Corpus, build

OWNER = {PASS_DOMAIN: "support.parcels-lost", FAIL_DOMAIN: "support.cod"}


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    return build(tmp_path / "c")


def _tree_hash(root: Path) -> str:
    """A hash of every name, link target, mode and byte under ``root`` (links not followed)."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(os.fsencode(root)):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(folder, name)
            st = os.lstat(path)
            h.update(path + b"\0" + str(st.st_mode).encode())
            if os.path.islink(path):
                h.update(os.readlink(path))
            elif os.path.isfile(path):
                with open(path, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def _migrate(capsys, c: Corpus, domain: str, *extra: str) -> tuple[int, dict]:
    ws, who = str(c.workspace), OWNER[domain]
    assert run_cli(capsys, "migrate", "inventory", "-w", ws, "--from", str(c.v1), "--domain", domain, "--as", who)[0] == 0
    assert run_cli(capsys, "migrate", "classify", "-w", ws, "--domain", domain, "--accept-suggested", "--as", who)[0] == 0
    assert run_cli(capsys, "migrate", "rewrite", "-w", ws, "--domain", domain, "--as", who)[0] == 0
    assert run_cli(capsys, "migrate", "index", "-w", ws, "--domain", domain, "--confirm", "--as", who)[0] == 0
    code, out, _ = run_cli(capsys, "migrate", "gate", "-w", ws, "--domain", domain, "--cases",
                           str(c.cases[domain]), "--as", who, "--json", *extra)
    return code, json.loads(out)


def test_a_domain_is_migrated_end_to_end_from_the_cli(corpus, capsys) -> None:
    before = _tree_hash(corpus.v1)
    code, rep = _migrate(capsys, corpus, PASS_DOMAIN)
    assert code == 0 and rep["status"] == migrate.MIGRATED
    g = rep["gate"]
    assert g["beats_baseline"] and g["memtui"]["hit@5"] > g["baseline"]["hit@5"] and not g["lost"]
    files = {i["file"]: i for i in rep["items"]}
    # the seeds' files and what the vocabulary found, each with why
    assert "named by the domain's seeds" in files["lost-scan-gap.md"]["why"]
    assert any(w.startswith("found by searching") for w in files["address-geocoding.md"]["why"])
    # classes: the discipline is a mechanic, the diary an experience entry, quirk and duplicate dropped
    assert files["lost-parcel-checklist.md"]["class"] == "mechanic"
    assert files["2026-05-20-lost-parcel-plovdiv.md"]["class"] == "experience"
    assert {d["file"] for d in rep["dropped"]} >= {"depotscan-cli-quirk.md", "lost-scan-gap-copy.md"}
    # every kept item is a proposal carrying its class and reason; nothing under memory/ changed
    with Session.open(corpus.workspace, read_only=True) as s:
        proposals = {v.id: v for v in Ledger(s.store).proposals()}
    assert {p["id"] for p in rep["proposals"]} == set(proposals)
    assert proposals["support/parcels-lost/lost-parcel-checklist.md@1"].classification["class"] == "mechanic"
    assert proposals["support/experience/2026-05-20-lost-parcel-plovdiv.md@1"].node == "support/experience"
    assert not (corpus.workspace / "memory/support/parcels-lost/lost-scan-gap.md").exists()
    # personal data is held back, the diary listed for a person to rewrite
    held = {r["file"]: r for r in rep["to_rewrite"]}
    assert held["lost-parcel-recipient-note.md"]["held"] and not files["lost-parcel-recipient-note.md"]["proposal"]
    codes = {f["code"] for f in held["2026-05-20-lost-parcel-plovdiv.md"]["findings"]}
    assert {"experience-field-missing", "article-diary"} <= codes
    # not taken, with reasons: the index lines pointing at missing files among them
    assert sum(n for r, n in rep["not_taken_counts"].items() if "holds no such file" in r) == len(corpus.missing)
    assert set(rep["times"]) == set(migrate.STEPS)
    assert _tree_hash(corpus.v1) == before  # V1DIR is never modified


def test_a_domain_built_to_fail_is_not_migrated_and_names_the_cases_it_lost(corpus, capsys) -> None:
    code, rep = _migrate(capsys, corpus, FAIL_DOMAIN)
    assert code == 1
    assert rep["status"] == migrate.NOT_MIGRATED and rep["next"] == "classify"
    assert sorted(rep["gate"]["lost"]) == ["cod-1", "cod-2", "cod-3"]
    code, out, _ = run_cli(capsys, "migrate", "report", "-w", str(corpus.workspace), "--domain", FAIL_DOMAIN)
    assert code == 0 and "not migrated — re-classify" in out and "cod-1, cod-2, cod-3" in out
    # re-classifying keeps the precedents; the passes run again and the domain passes
    ws, who = str(corpus.workspace), OWNER[FAIL_DOMAIN]
    sets = [f"--set={f}=article:the domain fact inside the workaround is kept" for f in
            ("cod-payout-session-workaround.md", "cod-settled-quirk.md", "cod-amount-mcp.md")]
    assert run_cli(capsys, "migrate", "classify", "-w", ws, "--domain", FAIL_DOMAIN, "--accept-suggested",
                   *sets, "--as", who)[0] == 0
    assert run_cli(capsys, "migrate", "rewrite", "-w", ws, "--domain", FAIL_DOMAIN, "--as", who)[0] == 0
    assert run_cli(capsys, "migrate", "index", "-w", ws, "--domain", FAIL_DOMAIN, "--confirm", "--as", who)[0] == 0
    code, out, _ = run_cli(capsys, "migrate", "gate", "-w", ws, "--domain", FAIL_DOMAIN, "--cases",
                           str(corpus.cases[FAIL_DOMAIN]), "--as", who, "--json")
    assert json.loads(out)["gate"]["lost"] == [] and len(json.loads(out)["proposals"]) == 4


def test_passes_run_in_order_and_say_which_comes_first(corpus, capsys) -> None:
    code, _, err = run_cli(capsys, "migrate", "rewrite", "-w", str(corpus.workspace), "--domain", PASS_DOMAIN)
    assert code == 1 and "migrate classify" in err
    code, _, err = run_cli(capsys, "migrate", "inventory", "-w", str(corpus.workspace), "--from",
                           str(corpus.v1 / "nowhere"), "--domain", PASS_DOMAIN)
    assert code == 2 and "not a folder" in err
    code, _, err = run_cli(capsys, "migrate", "inventory", "-w", str(corpus.workspace), "--from",
                           str(corpus.v1), "--domain", "support/nothing")
    assert code == 1 and "not a node" in err


def test_classify_waits_for_confirmation_and_takes_choices(corpus, capsys) -> None:
    ws = str(corpus.workspace)
    run_cli(capsys, "migrate", "inventory", "-w", ws, "--from", str(corpus.v1), "--domain", PASS_DOMAIN)
    code, out, _ = run_cli(capsys, "migrate", "classify", "-w", ws, "--domain", PASS_DOMAIN)
    assert code == 1 and "await confirmation" in out
    code, _, err = run_cli(capsys, "migrate", "classify", "-w", ws, "--domain", PASS_DOMAIN, "--set", "x.md=blob")
    assert code == 2 and "CLASS one of" in err
    code, out, _ = run_cli(capsys, "migrate", "classify", "-w", ws, "--domain", PASS_DOMAIN, "--accept-suggested",
                           "--set", "depot-search.md=index-line:an article says it already", "--json")
    item = next(i for i in json.loads(out)["items"] if i["file"] == "depot-search.md")
    assert (item["class"], item["reason"]) == ("index-line", "an article says it already")


def test_index_needs_the_owner(corpus, capsys) -> None:
    ws = str(corpus.workspace)
    for step in (["inventory", "--from", str(corpus.v1)], ["classify", "--accept-suggested"], ["rewrite"]):
        run_cli(capsys, "migrate", step[0], "-w", ws, "--domain", PASS_DOMAIN, *step[1:])
    code, out, _ = run_cli(capsys, "migrate", "index", "-w", ws, "--domain", PASS_DOMAIN)
    assert code == 1 and "(lost-scan-gap.md) — " in out  # shown, not recorded
    code, _, err = run_cli(capsys, "migrate", "index", "-w", ws, "--domain", PASS_DOMAIN, "--confirm", "--as", "someone")
    assert code == 3 and "support.parcels-lost" in err


def test_bad_input_is_reported_and_never_followed(corpus, capsys, tmp_path) -> None:
    v1 = corpus.v1
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret-notes.md").write_text("# lost parcel scan gap notes\n")
    os.symlink(outside / "secret-notes.md", v1 / "linked-out.md")
    os.symlink(outside, v1 / "linked-folder")
    (v1 / "scan-gap-binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\0\0lost parcel scan gap")
    (v1 / os.fsdecode(b"lost-\xff-scan-gap.md")).write_text("# lost parcel scan gap\n")
    (v1 / "notes.txt").write_text("lost parcel")
    before, outside_before = _tree_hash(v1), _tree_hash(outside)
    code, out, _ = run_cli(capsys, "migrate", "inventory", "-w", str(corpus.workspace), "--from", str(v1),
                           "--domain", PASS_DOMAIN, "--json")
    assert code == 0
    rep = json.loads(out)
    reasons = {n["file"]: n["reason"] for n in rep["not_taken"]}
    assert "outside V1DIR" in reasons["linked-out.md"] and "outside V1DIR" in reasons["linked-folder"]
    assert reasons["scan-gap-binary.md"] == "binary or not UTF-8 text"
    assert reasons["lost-\\xff-scan-gap.md"] == "its name is not UTF-8 text"
    assert reasons["notes.txt"] == "not a Markdown memory file"
    assert not any(i["file"] in ("linked-out.md", "scan-gap-binary.md") for i in rep["items"])
    assert _tree_hash(v1) == before and _tree_hash(outside) == outside_before
    # what the pass derived lives in the workspace's state folder only
    assert not (v1 / ".memtui").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "outside"]
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["cases", "v1", "ws"]


def test_a_huge_folder_is_walked_only_to_the_limit_with_progress(tmp_path, capsys) -> None:
    c = build(tmp_path / "c", filler=10)
    bulk = c.v1 / "bulk"
    bulk.mkdir()
    for n in range(100_000):
        os.close(os.open(bulk / f"{n:06d}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    seen: list[int] = []
    with Session.open(c.workspace) as s:
        rec = migrate.inventory(s, PASS_DOMAIN, c.v1, max_files=20_000, progress=lambda _s, n, _t: seen.append(n))
    assert rec["walk"]["stopped"] and rec["walk"]["looked"] == 20_001
    assert any("walk stopped after 20000 entries" in r for r in rec["not_taken_counts"])
    assert len(rec["not_taken"]) <= migrate.NOT_TAKEN_LISTED  # counted, not listed one by one
    assert seen and max(seen) >= 19_500


def test_a_killed_inventory_resumes_where_it_stopped(tmp_path) -> None:
    c = build(tmp_path / "c", filler=1200)

    class Killed(BaseException):
        pass

    def kill(_step: str, done: int, _total: int) -> None:
        if done >= 700:
            raise Killed

    with Session.open(c.workspace) as s:
        with pytest.raises(Killed):
            migrate.inventory(s, PASS_DOMAIN, c.v1, progress=kill)
        assert migrate.state(s.store, PASS_DOMAIN) is None  # no half state was written
        rec = migrate.inventory(s, PASS_DOMAIN, c.v1)
    assert rec["step"] == "inventory" and rec["walk"]["resumed"] >= 600
    assert rec["walk"]["resumed"] + rec["walk"]["copied"] == len(c.files)


def test_a_second_migration_of_the_same_domain_is_refused_while_one_runs(corpus, capsys) -> None:
    from memtui.core.workspace import Workspace

    with migrate.running(Workspace.open(corpus.workspace), PASS_DOMAIN):
        code, _, err = run_cli(capsys, "migrate", "inventory", "-w", str(corpus.workspace), "--from",
                               str(corpus.v1), "--domain", PASS_DOMAIN)
        assert code == 3 and "already running" in err and str(os.getpid()) in err
        # another domain may migrate meanwhile
        assert run_cli(capsys, "migrate", "inventory", "-w", str(corpus.workspace), "--from",
                       str(corpus.v1), "--domain", FAIL_DOMAIN)[0] == 0
    with Session.open(corpus.workspace, read_only=True) as s:
        assert migrate.state(s.store, PASS_DOMAIN) is None


def test_each_pass_is_one_audited_write(corpus, capsys) -> None:
    _migrate(capsys, corpus, PASS_DOMAIN)
    with Session.open(corpus.workspace, read_only=True) as s:
        actions = [e.action for e in s.audit.entries() if e.action.startswith("migrate.")]
    assert sorted(actions) == sorted(f"migrate.{step}" for step in migrate.STEPS)


def test_suggested_classes_follow_the_cheap_signals(corpus) -> None:
    texts = {p.stem: p.read_text("utf-8") for p in corpus.v1.glob("*.md")}
    seen: list[tuple[str, set[str]]] = []
    for stem in ["lost-scan-gap", *sorted(s for s in corpus.expected if s != "lost-scan-gap")]:
        s = classify.suggest(f"{stem}.md", texts[stem], "", seen)
        assert s.cls == corpus.expected[stem], (stem, s)
        if s.cls != "drop":
            seen.append((stem, classify.words(texts[stem])))
    active = [("memory/support/parcels-lost/scan-gaps.md", classify.words(texts["lost-scan-gap"]))]
    assert classify.suggest("x.md", texts["lost-scan-gap"], "", active).cls == "index-line"


def test_an_inventory_killed_by_sigkill_resumes(tmp_path) -> None:
    import signal
    import subprocess
    import sys
    import time

    c = build(tmp_path / "c", filler=3000)
    mirror = migrate.work_dir(Session.open(c.workspace, read_only=True).ws, PASS_DOMAIN) / "v1" / "memory"
    argv = [sys.executable, "-m", "memtui", "migrate", "inventory", "-w", str(c.workspace), "--from", str(c.v1),
            "--domain", PASS_DOMAIN]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if mirror.is_dir() and sum(1 for _ in mirror.iterdir()) > 200:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    killed = proc.wait() == -signal.SIGKILL
    with Session.open(c.workspace) as s:
        if killed:
            assert migrate.state(s.store, PASS_DOMAIN) is None
        rec = migrate.inventory(s, PASS_DOMAIN, c.v1)
    assert rec["walk"]["resumed"] > 200 and rec["walk"]["resumed"] + rec["walk"]["copied"] == len(c.files)
