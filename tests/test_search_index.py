"""The search index: incremental updates, locks, damage, filters, queries."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.core.search.engine import index as index_mod
from memtui.core.search.index import IndexBusyError, SearchIndex
from memtui.core.search.query import QueryError, parse, search
from memtui.core.workspace import Workspace

ARTICLE = """---
id: {id}
title: "{title}"
summary: "{summary}"
owner: {owner}
state: {state}
tags: [{tags}]
---

{body}
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _article(folder: Path, name: str, **kw: str) -> Path:
    values = {"id": name, "title": name, "summary": "", "owner": "support.curator", "state": "active",
              "tags": "", "body": ""}
    values.update(kw)
    path = folder / f"{name}.md"
    _write(path, ARTICLE.format(**values))
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    mem = root / "memory"
    _write(mem / "AGENTS.md", "# Memory\n\n- [Payments](payments/AGENTS.md) — payments node\n")
    _write(mem / "payments" / "AGENTS.md",
           "# Payments\n\n- [Card refunds](refunds.md) — refunds to the card go through PayGate\n")
    _article(mem / "payments", "refunds", title="Card refunds", summary="refunds to the card",
             tags="refund, card", body="A refund to a card is sent through the gateway.")
    _article(mem / "payments", "draft", title="Wombat draft", state="proposed",
             body="wombatquartz proposal text")
    _write(mem / "MEMORY_CUSTOM.md", "# Notes\n\nMy member note about квитанция.\n")
    _write(mem / "graph.jsonl",
           '{"type":"entity","name":"PayGate","entityType":"system","observations":["card gateway"]}\n'
           "not json at all\n")
    _write(root / "skills" / "refund-check" / "SKILL.md",
           "---\nname: refund-check\ndescription: Use when a refund is late.\n---\nSteps.\n")
    return Workspace.open(root)


def _paths(res) -> list[str]:  # noqa: ANN001
    return [h.path for h in res.hits]


def test_every_kind_is_indexed_and_found(ws: Workspace) -> None:
    idx = SearchIndex(ws)
    report = idx.update()
    assert report.rebuilt and report.documents >= 6
    kinds = {h.kind for h in search(idx, "refund", limit=50).hits}
    assert {"article", "index-line", "skill"} <= kinds
    assert search(idx, "квитанции").hits[0].kind == "notes"  # Bulgarian plural meets singular
    assert search(idx, "kind:entity gateway").hits[0].path == "memory/graph.jsonl#PayGate"
    # the bad graph line is a finding with its line number, not a crash
    bad = [f for f in report.findings if f.code == "search-file-skipped" and f.path.endswith("graph.jsonl")]
    assert bad and bad[0].line == 2


def test_proposals_hidden_unless_asked(ws: Workspace) -> None:
    idx = SearchIndex(ws)
    idx.update()
    assert search(idx, "wombatquartz").hits == []
    shown = search(idx, "wombatquartz", include_proposed=True).hits
    assert [h.state for h in shown] == ["proposed"]
    assert [h.state for h in search(idx, "wombatquartz state:proposed").hits] == ["proposed"]


def test_filters(ws: Workspace) -> None:
    idx = SearchIndex(ws)
    idx.update()
    assert _paths(search(idx, "refund tag:card")) == ["memory/payments/refunds.md"]
    assert search(idx, "refund tag:nosuchtag").hits == []
    assert {h.node for h in search(idx, "refund node:payments").hits} == {"payments"}
    assert {h.kind for h in search(idx, "refund owner:support.curator").hits} <= {"article", "index-line", "node"}
    assert {h.kind for h in search(idx, "refund", kinds=["skill"]).hits} == {"skill"}


def test_phrase_prefix_fuzzy_and(ws: Workspace) -> None:
    idx = SearchIndex(ws)
    idx.update()
    assert "memory/payments/refunds.md" in _paths(search(idx, '"sent through the gateway"'))
    assert search(idx, '"gateway through sent"').hits == []  # order matters in a phrase
    assert "memory/payments/refunds.md" in _paths(search(idx, "gatew*"))
    assert "memory/payments/refunds.md" in _paths(search(idx, "gatewya~"))
    both = _paths(search(idx, "refund AND gateway", limit=50))
    assert "memory/payments/refunds.md" in both and "skills/refund-check/SKILL.md" not in both


@pytest.mark.parametrize("query, words", [
    ('"unclosed phrase', "not closed"),
    ("ab*", "at least 3 letters"),
    ("kind:nonsense refund", "not a kind"),
    ("   ", "empty"),
])
def test_bad_query_is_a_clear_error(ws: Workspace, query: str, words: str) -> None:
    idx = SearchIndex(ws)
    idx.update()
    with pytest.raises(QueryError, match=words):
        search(idx, query)


def test_pasted_ticket_syntax_is_text(ws: Workspace) -> None:
    idx = SearchIndex(ws)
    idx.update()
    res = search(idx, "Error: (refund) „card“ – gateway: 500 [x] {y}")
    assert res.hits and res.hits[0].path == "memory/payments/refunds.md"


def test_incremental_add_change_delete(ws: Workspace) -> None:
    idx = SearchIndex(ws)
    idx.update()
    again = idx.update()
    assert (again.added, again.updated, again.removed) == (0, 0, 0) and not again.rebuilt
    node = ws.memory / "payments"
    new = _article(node, "cash", body="cash desk closing difference")
    rep = idx.update()
    assert rep.added == 1 and _paths(search(idx, "closing difference"))[0] == "memory/payments/cash.md"
    new.write_text(new.read_text("utf-8").replace("closing difference", "wombatquartz"), "utf-8")
    os.utime(new, ns=(time.time_ns(), time.time_ns() + 10**9))
    rep = idx.update(only=["memory/payments/cash.md"])  # the fast path after a save
    assert rep.updated == 1
    assert _paths(search(idx, "wombatquartz")) == ["memory/payments/cash.md"]
    assert search(idx, "closing").hits == []
    # touched but same bytes: hashed, not re-indexed
    os.utime(new, ns=(time.time_ns(), time.time_ns() + 5 * 10**9))
    rep = idx.update()
    assert rep.updated == 0 and rep.unchanged >= 1
    new.unlink()
    rep = idx.update()
    assert rep.removed == 1 and search(idx, "wombatquartz").hits == []


def test_schema_change_rebuilds(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    idx = SearchIndex(ws)
    idx.update()
    monkeypatch.setattr(index_mod, "SCHEMA_VERSION", index_mod.SCHEMA_VERSION + 1)
    rep = SearchIndex(ws).update()
    assert rep.rebuilt and rep.added >= 5
    assert idx.manifest.schema() == index_mod.SCHEMA_VERSION


def test_progress_callback(ws: Workspace) -> None:
    calls: list[tuple[int, int]] = []
    SearchIndex(ws).update(progress=lambda d, t: calls.append((d, t)))
    assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1] == calls[0][1] > 0


# locks and traps -----------------------------------------------------------------
def test_search_traps_reported_and_skipped_rest_indexed(shared: Path, tmp_path: Path) -> None:
    root = tmp_path / "b05"
    root.mkdir()
    subprocess.run([sys.executable, str(shared / "bug-inputs" / "B05" / "make_notes.py"),
                    str(root / "memory"), "40"], check=True, capture_output=True)
    ws = Workspace.open(root)
    idx = SearchIndex(ws)
    rep = idx.update()
    found = {(f.code, Path(f.path).name) for f in rep.findings}
    assert ("not-utf8", "m-trap-invalid-utf8.md") in found
    assert ("search-file-skipped", "m-trap-is-a-directory.md") in found
    assert ("symlink-broken", "m-trap-dangling-link.md") in found
    assert rep.documents == 40
    # the writer was not left open: a save after the traps is searchable
    note = sorted((root / "memory").glob("z-note-*.md"))[0]
    note.write_text(note.read_text("utf-8") + "\nwombatquartz\n", "utf-8")
    idx.update(only=[ws.shown(note)])
    assert _paths(search(idx, "wombatquartz")) == [ws.shown(note)]


def test_busy_index_says_who_and_stale_lock_file_is_harmless(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    idx = SearchIndex(ws)
    idx.update()
    assert any(p.name.endswith("WRITELOCK") for p in idx.dir.iterdir())  # the file stays …
    _article(ws.memory / "payments", "late", body="late refund")
    assert idx.update().added == 1  # … and does not block
    monkeypatch.setattr(index_mod, "LOCK_WAIT_SECONDS", 0.2)
    holder = idx.open().writer()  # another writer holds the lock
    (idx.dir / index_mod.PIDFILE).write_text(str(os.getpid()))
    try:
        _article(ws.memory / "payments", "later", body="later refund")
        with pytest.raises(IndexBusyError, match=rf"another memtui process \(pid {os.getpid()}\)"):
            SearchIndex(ws).update()
    finally:
        holder.cancel()
    assert SearchIndex(ws).update().added == 1  # once released, the update goes through


# damaged index -------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["missing-segment", "empty-toc", "half-segment", "orphans"])
def test_damaged_index_is_rebuilt_with_a_finding(ws: Workspace, shared: Path, mode: str) -> None:
    idx = SearchIndex(ws)
    idx.update()
    for i in range(3):  # several segments, as the damage recipe's first step makes
        _article(ws.memory / "payments", f"extra{i}", body=f"extra note {i} refund")
        idx.update()
    before = sorted(_paths(search(idx, "refund", limit=50)))
    files_before = {p: p.read_bytes() for p in ws.memory.rglob("*") if p.is_file()}
    if mode == "missing-segment" and not list(idx.dir.glob("*.seg")):
        # memtui writes segments uncompounded (no .seg file): lose one segment's postings
        sorted(idx.dir.glob("*.trm"))[0].unlink()
    else:
        done = subprocess.run(["sh", str(shared / "bug-inputs" / "B06" / "damage_index.sh"),
                               str(idx.dir), mode], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    fresh = SearchIndex(ws)  # as at the next start
    res = search(fresh, "refund", limit=50)
    damaged = [f for f in res.findings if f.code == "search-index-damaged"]
    if mode == "orphans":
        assert damaged == []
    else:
        assert len(damaged) == 1 and "rebuilding" in damaged[0].message
    assert sorted(_paths(res)) == before
    assert {p: p.read_bytes() for p in ws.memory.rglob("*") if p.is_file()} == files_before


def test_unwritable_index_folder_is_a_clear_error(ws: Workspace) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores folder permissions")
    state = ws.state_dir
    state.mkdir()
    os.chmod(state, 0o500)
    try:
        with pytest.raises(index_mod.IndexWriteError, match="cannot be written"):
            SearchIndex(ws).update()
    finally:
        os.chmod(state, 0o700)
    assert SearchIndex(ws).update().documents > 0
    shutil.rmtree(state)


def test_disk_full_during_commit_is_reported_and_index_recovers(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write failing for lack of space is reported at once and leaves the
    index usable; the next update catches up."""
    import errno

    from whoosh.writing import SegmentWriter

    idx = SearchIndex(ws)
    idx.update()
    _article(ws.memory / "payments", "full", body="wombatquartz after the disk filled")

    def no_space(self, *a, **kw):  # noqa: ANN001, ANN002, ANN003
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(SegmentWriter, "commit", no_space)
        with pytest.raises(index_mod.IndexWriteError, match="No space left"):
            idx.update()
    assert search(idx, "refund").hits  # still readable
    assert idx.update().added == 1  # lock released, catches up
    assert _paths(search(idx, "wombatquartz")) == ["memory/payments/full.md"]


def test_fast_path_after_save_adds_and_removes_single_files(ws: Workspace) -> None:
    idx = SearchIndex(ws)
    idx.update()
    new = _article(ws.memory / "payments", "saved", body="wombatquartz saved in memtui")
    rep = idx.update(only=["memory/payments/saved.md", "../outside.md", "memory/payments/nothing.md"])
    assert (rep.added, rep.removed) == (1, 0)
    assert _paths(search(idx, "wombatquartz")) == ["memory/payments/saved.md"]
    new.unlink()
    rep = idx.update(only=["memory/payments/saved.md"])
    assert rep.removed == 1 and search(idx, "wombatquartz").hits == []


def test_long_pasted_ticket_searches_its_most_informative_words(ws: Workspace,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """a ticket of more than MAX_QUERY_WORDS words keeps the rarest ones."""
    from memtui.core.search.engine import matching as query_mod

    mem = ws.memory / "payments"
    common = ["customer", "says", "order", "payment", "problem", "again", "today", "please", "help"]
    for i in range(6):  # common words: in many documents
        _article(mem, f"filler{i}", body=" ".join(common))
    idx = SearchIndex(ws)
    idx.update()
    monkeypatch.setattr(query_mod, "MAX_QUERY_WORDS", 2)
    ticket = " ".join(common[:4] + ["gateway"] + common[4:])
    with idx.open().searcher() as searcher:
        items, filters = parse(ticket)
        _, highlight, _, count = query_mod.build(items, filters, searcher.reader())
    plain = {t for t in highlight if not t.startswith("§")}
    assert "gateway" in plain and len(plain) <= 2, "the rarest words are kept, the common dropped"
    assert count > len(plain), "confidence still divides by every word of the ticket"
    res = search(idx, ticket)
    assert "filler" not in res.hits[0].path, "the rare word decides, not the common ones"


def test_filter_keeps_scores_and_only_lets_matching_items_through(ws: Workspace) -> None:
    idx = SearchIndex(ws)
    idx.update()
    plain = search(idx, "refund")
    filtered = search(idx, "refund tag:card")
    assert filtered.hits and {h.path for h in filtered.hits} <= {h.path for h in plain.hits}
    assert all(h.kind in ("article", "experience") for h in filtered.hits)
    by_path = {h.path: h.score for h in plain.hits}
    assert all(abs(h.score - by_path[h.path]) < 1e-6 for h in filtered.hits), "a filter adds no score"


def test_sound_key_searched_only_where_it_adds_documents(ws: Workspace) -> None:
    """Speed: an English word's key finds the same documents, so it is left out;
    a Bulgarian word typed in Latin letters keeps its key and still meets the Cyrillic text."""
    from memtui.core.search.engine import matching as query_mod
    from memtui.core.search.sources import TRANSLIT_FIELD

    idx = SearchIndex(ws)
    idx.update()

    def fields(text: str) -> set[str]:
        with idx.open().searcher() as searcher:
            items, filters = parse(text)
            q, _, _, _ = query_mod.build(items, filters, searcher.reader())
        return {t[0] for t in q.iter_all_terms()}

    assert TRANSLIT_FIELD not in fields("refund")
    assert TRANSLIT_FIELD in fields("kvitanciya")
    assert TRANSLIT_FIELD in fields("квитанция"), "a Cyrillic word keeps its key"
    assert any(h.kind == "notes" for h in search(idx, "kvitanciya").hits)


def test_ticket_candidates_keep_the_ranking_of_the_full_search(ws: Workspace,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """a ticket is scored only on what its rarest words find; the best
    results are those of scoring every document."""
    from memtui.core.search.engine import matching as query_mod

    mem = ws.memory / "payments"
    common = ["customer", "says", "order", "payment", "problem", "today", "please", "help"]
    for i in range(8):
        # every common word in all 8 documents, in varied order and length
        _article(mem, f"filler{i}", body=" ".join((common[i % 3:] + common[:i % 3]) * (1 + i % 2)))
    idx = SearchIndex(ws)
    idx.update(only=None)
    ticket = " ".join(common + ["refund", "card", "gateway"] + common)
    monkeypatch.setattr(query_mod, "MAX_QUERY_WORDS", 6)
    monkeypatch.setattr(query_mod, "TICKET_RARE", 0)  # no candidate step: every document scored
    full = search(idx, ticket, limit=3)
    monkeypatch.setattr(query_mod, "TICKET_RARE", 2)
    narrowed = search(idx, ticket, limit=3)
    assert [h.path for h in narrowed.hits] == [h.path for h in full.hits]
    assert [round(h.score, 6) for h in narrowed.hits] == [round(h.score, 6) for h in full.hits], \
        "the candidate set adds no score"
    monkeypatch.setattr(query_mod, "TICKET_RARE", 2)
    filtered = search(idx, ticket + " kind:entity", limit=3)
    assert filtered.hits and {h.kind for h in filtered.hits} == {"entity"}, "filters apply to the candidates"


def test_deleted_documents_do_not_switch_off_pruning() -> None:
    """Whoosh's FilterMatcher (deleted documents) kept the block signal and skipped onto
    deleted documents; memtui patches both (OR 5 s → 0.4 s at 100k after an edit)."""
    import memtui.core.search.index  # noqa: F401 - applies the patch
    from whoosh.matching import ListMatcher
    from whoosh.matching.wrappers import FilterMatcher

    class Blocks(ListMatcher):
        def next(self):  # every step enters a new block
            super().next()
            return True

        def supports_block_quality(self):
            return True

        def skip_to_quality(self, minquality):  # lands on document 3, which is deleted
            self.skip_to(3)
            return 1

    m = FilterMatcher(Blocks([1, 2, 3, 4, 5]), {2, 3}, exclude=True)
    assert m.id() == 1
    assert m.next() is True and m.id() == 4, "the new-block signal reaches the collector"
    m = FilterMatcher(Blocks([1, 2, 3, 4, 5]), {3}, exclude=True)
    m.skip_to_quality(1.0)
    assert m.id() == 4, "never stops on a deleted document"


def test_fuzzy_keeps_the_first_letters_as_typed(ws: Workspace) -> None:
    """``word~`` corrects typos after the first FUZZY_PREFIX letters (speed)."""
    from memtui.core.search.engine.matching import FUZZY_PREFIX

    idx = SearchIndex(ws)
    idx.update()
    assert FUZZY_PREFIX == 2
    assert any(h.path.endswith("refunds.md") for h in search(idx, "refnd~").hits)
    assert not any(h.path.endswith("refunds.md") for h in search(idx, "rfund~").hits)


def test_proposals_and_retired_versions_are_searchable_only_on_request(sample_copy, capsys) -> None:
    """A proposal's text lives only in the store; it is indexed with its state,
    absent from normal results and labelled when asked for."""

    from memtui.cli import main

    assert main(["index", "-w", str(sample_copy)]) in (0, 1)  # 1: the sample has a bad file on purpose
    capsys.readouterr()
    assert main(["search", "-w", str(sample_copy), "darkness", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["hits"] == []
    assert main(["search", "-w", str(sample_copy), "darkness", "--include-proposed", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert [(h["kind"], h["state"]) for h in hits] == [("proposal", "proposed")]
    assert hits[0]["path"].endswith("exp-013-label-printer-blank.md@1")


def test_prefix_scores_the_best_field_and_stops_when_a_page_is_full(ws: Workspace) -> None:
    """A lone ``prefix*`` ranks title matches above body matches (a constant score per
    document, as Lucene's prefix query: its field-weighted frequency, capped), finds words by
    their unstemmed start, and says when its count is only a lower bound (it stops
    reading once the page is full at a score nothing unread can beat)."""
    mem = ws.memory / "routes"
    _write(mem / "AGENTS.md", "# Routes\n")
    _article(mem, "rules", title="Routing rules", body="routing again")
    _article(mem, "body", title="Depot notes", body="the routing of parcels at night")
    _article(mem, "other", title="Router", body="a router in the depot")
    _article(mem, "draft", title="Routing draft", state="proposed", body="draft")
    idx = SearchIndex(ws)
    idx.update()
    res = search(idx, "routi* kind:article", limit=10)
    assert _paths(res) == ["memory/routes/rules.md", "memory/routes/body.md"]
    assert res.hits[0].score > res.hits[1].score and not res.at_least
    first = res.hits[0].snippet
    assert first is not None and [first.text[a:b] for a, b in first.spans] == ["Routing"]
    one = search(idx, "routi* kind:article", limit=1)
    assert _paths(one) == ["memory/routes/rules.md"] and one.total == 2 and not one.at_least
    # "rout*": the page is full at the top score (title + body) before "router" is read
    early = search(idx, "rout* kind:article", limit=1)
    assert _paths(early) == ["memory/routes/rules.md"] and early.at_least
    assert len(search(idx, "rout* kind:article", limit=10).hits) == 3
    assert "memory/routes/draft.md" in _paths(search(idx, "routi*", include_proposed=True, limit=20))
    assert _paths(search(idx, "routi* AND parcels")) == ["memory/routes/body.md"]
    assert "memory/routes/other.md" in _paths(search(idx, "route* kind:article", limit=10))


def test_prefix_and_fuzzy_skip_the_deleted_versions_of_edited_documents(ws: Workspace) -> None:
    """``prefix*`` and ``word~`` read posting blocks directly (for speed); an edited
    article's old document is deleted in its segment and must not come back."""
    mem = ws.memory / "payments"
    paths = [_article(mem, f"quokka{i}", title=f"Quokka {i}", body="quokkaquartz") for i in range(3)]
    idx = SearchIndex(ws)
    idx.update()
    everyone = {f"memory/payments/quokka{i}.md" for i in range(3)}
    assert set(_paths(search(idx, "quokkaq*"))) == everyone
    _article(mem, "quokka1", title="Wallabies", body="nothing about it now")
    idx.update(only=[ws.shown(paths[1])])
    for query in ("quokkaq*", "quokkaqartz~"):
        got = _paths(search(idx, query))
        assert sorted(got) == sorted(everyone - {"memory/payments/quokka1.md"}), query
    got = _paths(search(idx, "quok*"))  # every article by its id (quokka0 …), each once
    assert sorted(got) == sorted(everyone)
    assert _paths(search(idx, "walla*")) == ["memory/payments/quokka1.md"]


@pytest.mark.parametrize("words, slop", [(["red", "fox"], 1), (["red", "fox", "den"], 1), (["red", "den"], 3)])
def test_phrase_matches_and_scores_as_whoosh_phrase(ws: Workspace, words: list[str], slop: int) -> None:
    """The array-based phrase (Whoosh's span matcher took 13 µs a document)
    finds the same documents with the same scores as Whoosh's ``Phrase``, across fields
    never, and not in deleted documents."""
    import random

    from whoosh import query as wq

    from memtui.core.search.engine.matching import _Phrase
    from memtui.core.search.sources import CONTENT_FIELD

    rng = random.Random(4)
    mem = ws.memory / "foxes"
    vocab = ["red", "fox", "den", "owl", "cat"]
    paths = []
    for i in range(300):
        body = " ".join(rng.choice(vocab) for _ in range(rng.randint(2, 30)))
        paths.append(_article(mem, f"f{i}", title=rng.choice(["Red", "Fox den", "Owl"]), body=body))
    idx = SearchIndex(ws)
    idx.update()
    for p in paths[:40:3]:  # edited: their old documents are deleted in their segment
        _article(mem, p.stem, title="Owl", body="red fox den " * (1 + len(p.stem) % 3))
    idx.update(only=[ws.shown(p) for p in paths[:40:3]])
    searcher = idx.searcher()

    def scores(q) -> dict[str, float]:  # noqa: ANN001
        return {h["id"]: h.score for h in searcher.search(q, limit=None)}

    ours = scores(_Phrase(words, slop=slop))
    theirs = scores(wq.Phrase(CONTENT_FIELD, words, slop=slop))
    assert ours.keys() == theirs.keys() and len(ours) > 5
    assert all(ours[k] == pytest.approx(theirs[k]) for k in ours)
    title_then_body = _article(mem, "split", title="Red", body="fox only")
    idx.update(only=[ws.shown(title_then_body)])
    assert "memory/foxes/split.md" not in _paths(search(idx, '"red fox"', limit=500)), "a phrase spans no fields"


def _birds(ws: Workspace) -> SearchIndex:
    """400 articles of four bird words, some proposed (hidden), a seventh edited into a
    second segment (their first versions deleted, many ties)."""
    import random

    rng = random.Random(9)
    mem = ws.memory / "birds"
    paths = []
    for i in range(400):
        body = " ".join(rng.choice(["heron", "owl", "wren", "kite"]) for _ in range(rng.randint(1, 40)))
        paths.append(_article(mem, f"b{i}", title=rng.choice(["Heron", "Wren", "Owl notes"]), body=body,
                              state=rng.choice(["active"] * 5 + ["proposed"])))
    idx = SearchIndex(ws)
    idx.update()
    for p in paths[::7]:
        _article(mem, p.stem, title="Heron heron", body="heron owl")  # ties, in a second segment
    idx.update(only=[ws.shown(p) for p in paths[::7]])
    assert len(list(idx.searcher().reader().leaf_readers())) > 1
    return idx


def _hidden(searcher) -> set[int]:  # noqa: ANN001
    from whoosh import query as wq

    from memtui.core.search.engine.matching import HIDDEN_STATES

    return set(searcher.docs_for_query(wq.Or([wq.Term("state", s) for s in HIDDEN_STATES])))


def test_a_lone_word_ranks_exactly_as_whoosh(ws: Workspace) -> None:
    """The array-based top-N of a one-word query (Whoosh scored a common
    word posting by posting, 200 ms at 100k articles) gives Whoosh's documents, scores
    and tie order, over several segments, with deleted documents and hidden states."""
    from whoosh import query as wq

    from memtui.core.search.engine.matching import _term_alone
    from memtui.core.search.sources import CONTENT_FIELD

    idx = _birds(ws)
    searcher = idx.searcher()
    mask = _hidden(searcher)
    for word, boost in (("heron", 1.0), ("owl", 2.5), ("kite", 1.0)):
        for limit in (1, 10, 60):
            ours, total = _term_alone(searcher, word, boost, limit, mask)
            theirs = searcher.search(wq.Term(CONTENT_FIELD, word, boost=boost), limit=limit, mask=mask)
            assert [d for d, _ in ours] == [h.docnum for h in theirs], (word, limit)
            assert [s for _, s in ours] == pytest.approx([h.score for h in theirs])
            assert total >= len(ours)
    assert _paths(search(idx, "heron", limit=3)) == _paths(search(idx, "heron kind:article", limit=3))


def test_every_word_and_filter_queries_rank_exactly_as_whoosh(ws: Workspace) -> None:
    """The intersection of ``a AND b`` and of words with a filter (Whoosh scored every
    document of the intersection through its collector: AND queries of common words were
    ten times FTS5's time) gives Whoosh's documents, scores and tie order, and the exact
    number of matches, over several segments, with deleted documents and hidden states;
    the filter's documents are the candidates when fewer than the rarest word's."""
    from whoosh import query as wq

    from memtui.core.search.engine.matching import _conjunction, _conjuncts, _filter_docs, build
    from memtui.core.search.query import parse

    idx = _birds(ws)
    searcher = idx.searcher()
    reader = searcher.reader()
    mask = _hidden(searcher)
    queries = ["heron AND owl", "owl AND kite AND wren", "heron kind:article", "wren AND owl state:proposed",
               "kite AND heron node:birds", "heron AND owl AND nothingatall", "owl tag:none"]
    for text in queries:
        items, filters = parse(text)
        query, _, fq, _ = build(items, filters, reader)
        clauses = _conjuncts(query)
        assert clauses is not None, text
        whole = query if fq is None else wq.And([query, fq.with_boost(0.0)])
        m = None if "state" in filters else mask
        exact = set(searcher.docs_for_query(whole)) - (m or set())
        for limit in (1, 10, 60):
            ours, total = _conjunction(searcher, clauses, _filter_docs(searcher, fq) if fq is not None else None,
                                       limit, m)
            theirs = searcher.search(whole, limit=limit, mask=m)
            assert [d for d, _ in ours] == [h.docnum for h in theirs], (text, limit)
            assert [s for _, s in ours] == pytest.approx([h.score for h in theirs], rel=1e-12)
            assert total == len(exact), text
    assert _paths(search(idx, "heron AND owl", limit=5)) != []


def test_prefix_ties_show_the_shorter_document_first(ws: Workspace) -> None:
    """Equal prefix scores (both at the cap) list the shorter document first, not the one
    indexed first: a title match beats a long body that repeats the word."""
    mem = ws.memory / "zebras"
    filler = " ".join(["stripes and grass"] * 60)
    _article(mem, "a-long", title="Savanna notes", body=f"zebraflux {filler} zebraflux {filler} zebraflux")
    _article(mem, "b-short", title="Zebraflux", summary="zebraflux")
    idx = SearchIndex(ws)
    idx.update()
    res = search(idx, "zebraf* kind:article")
    assert _paths(res) == ["memory/zebras/b-short.md", "memory/zebras/a-long.md"]
    assert res.hits[0].score == res.hits[1].score


def test_a_save_changes_only_its_own_manifest_entry(ws: Workspace) -> None:
    """The manifest is one table, a row a file (the JSON manifest was rewritten
    whole at every save, 10 MB at 100k articles): a save updates its file's row and leaves
    every other row as it was; another process's index sees it at once."""
    idx = SearchIndex(ws)
    idx.update()
    before = idx.manifest.stamps()
    late = _article(ws.memory / "payments", "late", title="Late refunds")
    rel = ws.shown(late)
    rep = idx.update(only=[rel])
    assert rep.added == 1
    after = SearchIndex(ws).manifest.stamps()  # another process's view
    assert set(after) == set(before) | {rel}
    assert all(after[p] == before[p] for p in before), "no other row changed"
    st = late.stat()
    assert after[rel] == (st.st_mtime_ns, st.st_size)
    assert idx.update().unchanged == len(after)
    late.unlink()
    assert idx.update(only=[rel]).removed == 1 and rel not in idx.manifest.stamps()


def test_a_damaged_manifest_means_a_rebuild_not_a_crash(ws: Workspace) -> None:
    """A manifest that is not a database reads as absent: the index is rebuilt from the files."""
    idx = SearchIndex(ws)
    idx.update()
    (idx.dir / index_mod.MANIFEST).write_bytes(b"not a database at all" * 100)
    fresh = SearchIndex(ws)
    rep = fresh.update()
    assert rep.rebuilt and rep.added >= 5
    assert search(fresh, "refund").hits


def test_compressed_and_plain_posting_blocks_are_read_alike(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Posting blocks are written uncompressed (build speed); an index written with zlib
    blocks (before) keeps working beside new segments."""
    mem = ws.memory / "payments"
    monkeypatch.setattr(index_mod, "BLOCK_COMPRESSION", 3)
    idx = SearchIndex(ws)
    idx.update()
    before = _paths(search(idx, "refund", limit=20))
    assert before
    monkeypatch.setattr(index_mod, "BLOCK_COMPRESSION", 0)
    path = _article(mem, "fresh", title="Fresh refund notes", body="refund refund")
    idx.update(only=[ws.shown(path)])
    after = search(idx, "refund", limit=20)
    assert "memory/payments/fresh.md" in _paths(after)
    assert set(before) | {"memory/payments/fresh.md"} == set(_paths(after)), "old and new segments both read"
    assert set(_paths(after)) <= set(_paths(search(idx, "refu*", limit=50)))


def test_a_cut_posting_file_is_repaired_not_a_traceback(ws: Workspace, shared: Path) -> None:
    """The bug inputs' ``half-segment`` damage on an index whose largest file is its postings: Whoosh raises a
    bare ``Exception("Block tag error b''")`` while reading a cut block (it closed the
    TUI); the search rebuilds the index with a finding and answers as before."""
    words = ["parcel", "depot", "route", "label", "invoice", "refund"]
    for i in range(400):
        body = " ".join(words[(i + k) % 6] for k in range(600))
        _article(ws.memory / "bulk", f"n{i:03d}", title=f"Note {i}", body=body)
    idx = SearchIndex(ws)
    idx.update()
    before = {w: sorted(_paths(search(idx, w, limit=500))) for w in words}
    assert max(idx.dir.glob("*"), key=lambda p: p.stat().st_size).suffix == ".pst"
    done = subprocess.run(["sh", str(shared / "bug-inputs" / "B06" / "damage_index.sh"),
                           str(idx.dir), "half-segment"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    fresh = SearchIndex(ws)
    findings = []
    for w in words:
        res = search(fresh, w, limit=500)
        findings.extend(f for f in res.findings if f.code == "search-index-damaged")
        assert sorted(_paths(res)) == before[w], w
    assert len(findings) == 1 and "rebuilding" in findings[0].message


def test_a_search_during_another_process_rebuild_leaves_it_alone(ws: Workspace,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """While another process rebuilds (it holds the write lock; its new index has no
    manifest yet), a search says the index is busy and who holds it, and removes nothing:
    it used to wipe the folder, killing the rebuild (FileNotFoundError on MAIN.tmp)."""
    idx = SearchIndex(ws)
    idx.update()
    (idx.dir / index_mod.MANIFEST).unlink()  # mid-rebuild: the manifest comes last
    monkeypatch.setattr(index_mod, "LOCK_WAIT_SECONDS", 0.2)
    holder = idx.open().writer()  # the rebuilding process
    (idx.dir / index_mod.PIDFILE).write_text(str(os.getpid()))
    (idx.dir / "MAIN.tmp").mkdir(exist_ok=True)
    files = sorted(p.name for p in idx.dir.iterdir())
    try:
        with pytest.raises(IndexBusyError, match=rf"another memtui process \(pid {os.getpid()}\)"):
            search(SearchIndex(ws), "refund")
        assert sorted(p.name for p in idx.dir.iterdir()) == files, "nothing removed under the builder"
    finally:
        holder.cancel()
    res = search(SearchIndex(ws), "refund")  # once it is free: rebuilt, and found
    assert "memory/payments/refunds.md" in _paths(res)


def test_owner_filter_finds_articles_owned_through_their_node(ws: Workspace) -> None:
    """``owner:`` matches an article without an owner of its own by its node's owner (node
    front matter, then ``memtui.toml [owners]``, then the parent: seed 000 §7.4b). The
    lazy owner map was empty, hence falsy, and replaced by a plain dict (new-user test)."""
    (ws.root / "memtui.toml").write_text('[owners]\n"depots" = "depot.keeper"\n', "utf-8")
    ws = Workspace.open(ws.root)
    mem = ws.memory / "depots"
    _write(mem / "AGENTS.md", "# Depots\n\n- [Sofia hub](sofia.md) — the Sofia depot\n")
    _write(mem / "sofia.md", "---\nid: sofia\ntitle: Sofia hub\nstate: active\n---\n\nThe Sofia depot opens at six.\n")
    _write(mem / "night" / "AGENTS.md", "---\nowner: night.shift\n---\n# Night\n")
    _write(mem / "night" / "late.md", "---\nid: late\ntitle: Late vans\nstate: active\n---\n\nVans after midnight.\n")
    idx = SearchIndex(ws)
    idx.update()
    assert "memory/depots/sofia.md" in _paths(search(idx, "owner:depot.keeper", limit=50))
    assert _paths(search(idx, "owner:night.shift kind:article")) == ["memory/depots/night/late.md"]
    assert _paths(search(idx, "vans owner:depot.keeper kind:article")) == []


def test_an_entry_is_found_first_by_its_own_id(ws: Workspace) -> None:
    """Quoting an entry's id (``exp-002``) finds that entry first, above files that mention
    it (new-user test: the entry itself was missing from the results)."""
    mem = ws.memory / "payments"
    _article(mem, "double", id="exp-002", title="COD paid twice", body="Settlement ran twice.")
    for i in range(3):
        _article(mem, f"ref{i}", title=f"Related {i}", body="See exp-002 and exp-002 again; exp-002.")
    idx = SearchIndex(ws)
    idx.update()
    assert _paths(search(idx, "exp-002"))[0] == "memory/payments/double.md"
    assert _paths(search(idx, "kind:article exp-002"))[0] == "memory/payments/double.md"


def test_bulgarian_prefix_finds_words_by_their_stem_and_highlights_them(ws: Workspace) -> None:
    """``наложен*``: the stemmer rewrites ``наложен`` to ``наложн``, which no expansion of
    the prefix reaches; ``пратката*`` finds ``пратки`` (same stem) and marks it (new-user
    test: 0 results, and results with nothing highlighted)."""
    mem = ws.memory / "cod"
    _article(mem, "cod", title="Наложен платеж", body="Плащане с наложен платеж при доставка.")
    _article(mem, "parcels", title="Пратки", body="Куриерът носи пратки до офиса.")
    idx = SearchIndex(ws)
    idx.update()
    assert "memory/cod/cod.md" in _paths(search(idx, "наложен*"))
    res = search(idx, "пратката* kind:article")
    assert "memory/cod/parcels.md" in _paths(res)
    hit = next(h for h in res.hits if h.path == "memory/cod/parcels.md")
    assert hit.snippet is not None and hit.snippet.spans, "the word found by its stem is marked"
    assert _paths(search(idx, "quokkaq*")) == []


def test_counts_are_exact_when_the_page_is_not_full(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """Fewer hits than the limit means every match was collected: the count is that, not
    Whoosh's estimate (new-user test: "2 hits, 22 result(s)" with a filter; "20 of 38" for
    a word whose parts overlap). A full page says "about"."""
    from memtui.cli import main

    mem = ws.memory / "errors"
    for i in range(6):
        _article(mem, f"e{i}", title=f"Error {i}", body="ORA-00001 unique constraint" if i % 2 else "ora rows")
    idx = SearchIndex(ws)
    idx.update()
    res = search(idx, "ORA-00001", limit=50)
    assert res.total == len(res.hits) and not res.estimated
    filtered = search(idx, "refund kind:skill", limit=50)
    assert filtered.total == len(filtered.hits) == 1
    # a page of 2: the answer is judged on ten hits, which held every match, so the count is exact
    full = search(idx, "ora", limit=2)
    assert len(full.hits) == 2 and not full.estimated and full.total > 2
    assert main(["search", "-w", str(ws.root), "ora", "--limit", "2"]) == 0
    err = capsys.readouterr().err
    assert f"{full.total} results" in err and "about" not in err and "--cursor 2" in err
    for i in range(20):  # more matches than the ten judged: the count is Whoosh's estimate
        _article(mem, f"f{i}", title=f"Fault {i}", body="ora rows")
    idx.update()
    many = search(idx, "ora", limit=2)
    assert len(many.hits) == 2 and many.estimated and many.total >= 10
    assert main(["search", "-w", str(ws.root), "ORA-00001", "--limit", "50"]) == 0
    err = capsys.readouterr().err
    assert f"{res.total} results" in err and "about" not in err and "(s)" not in err
    assert main(["search", "-w", str(ws.root), "refund kind:skill", "--limit", "50"]) == 0
    assert "1 result in" in capsys.readouterr().err, "one result, said in the singular"


def test_latin_typed_full_article_finds_the_cyrillic_word(ws: Workspace) -> None:
    """``skenerat`` (official transliteration: ъ → a) and ``kurierut`` (ъ → u) find
    ``скенерът`` / ``куриерът`` (new-user test: nothing found); ``advokat`` still finds
    ``адвокат``, whose ``-ат`` is no article."""
    mem = ws.memory / "depot"
    _article(mem, "scan", title="Скенерът не чете", body="Куриерът вижда грешка на скенера.")
    _article(mem, "law", title="Адвокат", body="Договор с адвокат.")
    idx = SearchIndex(ws)
    idx.update()
    for query in ("skenerat", "kurierut", "skenerut"):
        assert "memory/depot/scan.md" in _paths(search(idx, query)), query
    assert _paths(search(idx, "advokat kind:article")) == ["memory/depot/law.md"]


def test_a_word_said_tens_of_thousands_of_times_is_indexed_and_found(ws: Workspace) -> None:
    """A posting's positions can exceed 64 KiB (a big note saying one word 40,000 times): the
    compact posting storage sized value lengths as 16-bit numbers (OverflowError in the
    index worker, found by the big-note TUI test)."""
    big = _article(ws.memory / "notes", "chatty", title="Chatty", body="quokka wallaby " * 40_000)
    idx = SearchIndex(ws)
    idx.update()
    assert _paths(search(idx, '"quokka wallaby"')) == [ws.shown(big)]
    assert search(idx, "wallaby").hits[0].path == ws.shown(big)
