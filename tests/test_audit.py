"""Every finding of the audit, each shown on a small workspace built for it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core import audit
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    return path


def article(title: str, summary: str, body: str = "Body text.\n") -> str:
    return f'---\ntitle: "{title}"\nsummary: "{summary}"\n---\n{body}'


@pytest.fixture
def ws_root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "memory/AGENTS.md", "---\nowner: platform.root\n---\n# Root\n- [Support](support/AGENTS.md) — the module\n")
    write(root, "memory/support/AGENTS.md", "# Support\n- [Lockout](lockout.md) — Reset rules\n")
    write(root, "memory/support/lockout.md", article("Lockout", "Reset rules"))
    return root


def codes(root: Path) -> list[tuple[str, str, int | None]]:
    report = audit.run(Workspace.open(root))
    return [(f.code, f.path, f.line) for f in report.findings]


def test_clean_workspace_has_no_finding(ws_root: Path) -> None:
    report = audit.run(Workspace.open(ws_root))
    assert report.findings == []
    assert (report.nodes, report.articles) == (2, 1)
    assert not report.has_errors


def test_index_line_pointing_at_a_missing_file(ws_root: Path) -> None:
    write(ws_root, "memory/support/AGENTS.md", "# Support\n- [Lockout](lockout.md) — Reset rules\n- [Gone](gone.md) — x\n")
    assert ("index-missing-file", "memory/support/AGENTS.md", 3) in codes(ws_root)


def test_article_not_listed(ws_root: Path) -> None:
    write(ws_root, "memory/support/vpn.md", article("VPN", "Tunnel"))
    report = audit.run(Workspace.open(ws_root))
    found = [f for f in report.findings if f.code == "article-unlisted"]
    assert [f.path for f in found] == ["memory/support/vpn.md"]
    assert "- [VPN](vpn.md)" in found[0].fix


def test_one_liner_differs_from_summary(ws_root: Path) -> None:
    write(ws_root, "memory/support/lockout.md", article("Lockout", "Something else"))
    assert ("one-liner-mismatch", "memory/support/AGENTS.md", 2) in codes(ws_root)


def test_whitespace_only_difference_is_not_a_mismatch(ws_root: Path) -> None:
    write(ws_root, "memory/support/lockout.md", article("Lockout", "Reset   rules"))
    assert codes(ws_root) == []


def test_unparsable_front_matter_names_the_line(ws_root: Path) -> None:
    write(ws_root, "memory/support/lockout.md", "---\ntitle: Lockout\nsummary: Reset: rules\n---\nbody\n")
    found = [c for c in codes(ws_root) if c[0] == "front-matter-invalid"]
    assert found == [("front-matter-invalid", "memory/support/lockout.md", 3)]


def test_file_not_utf8(ws_root: Path) -> None:
    write(ws_root, "memory/support/lockout.md", b"---\ntitle: x\n---\ncaf\xe9\n")
    assert ("not-utf8", "memory/support/lockout.md", 4) in codes(ws_root)


def test_binary_file_is_not_text(ws_root: Path) -> None:
    write(ws_root, "memory/support/lockout.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    assert any(c[0] == "not-utf8" for c in codes(ws_root))


def test_file_over_the_size_limit(ws_root: Path) -> None:
    write(ws_root, "memtui.toml", "[limits]\nmax_file_bytes = 1000\n")
    write(ws_root, "memory/support/lockout.md", article("Lockout", "Reset rules", "x" * 5000 + "\n"))
    found = [c for c in codes(ws_root) if c[0] == "file-too-large"]
    assert found == [("file-too-large", "memory/support/lockout.md", None)]


def test_link_leaving_the_workspace(ws_root: Path) -> None:
    write(ws_root, "memory/support/lockout.md",
          article("Lockout", "Reset rules", "See [x](../../../etc/passwd) and [ok](../AGENTS.md).\n"))
    assert codes(ws_root) == [("link-outside", "memory/support/lockout.md", 5)]


def test_link_inside_a_code_span_is_not_checked(ws_root: Path) -> None:
    write(ws_root, "memory/support/lockout.md",
          article("Lockout", "Reset rules", "Write `[x](../../../../etc)` like this.\n"))
    assert codes(ws_root) == []


def test_symlink_leaving_the_workspace_is_reported_not_followed(ws_root: Path, tmp_path: Path) -> None:
    secret = write(tmp_path, "outside/secret.md", "---\nsummary: SECRET\n---\nsecret\n")
    os.symlink(secret, ws_root / "memory/support/leak.md")
    report = audit.run(Workspace.open(ws_root))
    found = [f for f in report.findings if f.code == "symlink-outside"]
    assert [f.path for f in found] == ["memory/support/leak.md"]
    assert report.articles == 1  # the link was not read
    assert not any("SECRET" in f.message for f in report.findings)


def test_node_with_no_owner_reported_once_at_the_top(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, "memory/AGENTS.md", "# Root\n- [A](a/AGENTS.md) — a\n")
    write(root, "memory/a/AGENTS.md", "# A\n")
    write(root, "memory/a/b/AGENTS.md", "# B\n")
    assert [c for c in codes(root) if c[0] == "node-no-owner"] == [("node-no-owner", "memory/AGENTS.md", None)]


def test_duplicate_index_entries(ws_root: Path) -> None:
    write(ws_root, "memory/support/AGENTS.md",
          "# Support\n- [Lockout](lockout.md) — Reset rules\n- [Lockout](lockout.md) — Reset rules\n")
    assert ("index-duplicate", "memory/support/AGENTS.md", 3) in codes(ws_root)


def test_owner_resolution_order(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, "memtui.toml", '[owners]\n"a" = "from.config"\n"a/b" = "config.b"\n')
    write(root, "memory/AGENTS.md", "---\nowner: root.owner\n---\n# Root\n")
    write(root, "memory/a/AGENTS.md", "# A\n")
    write(root, "memory/a/b/AGENTS.md", "---\nowner: front.matter\n---\n# B\n")
    write(root, "memory/a/b/c/AGENTS.md", "# C\n")
    write(root, "memory/z/AGENTS.md", "# Z\n")
    tree = MemoryTree(Workspace.open(root))
    assert tree.owner("a/b") == ("front.matter", "front matter")  # front matter beats memtui.toml
    assert tree.owner("a") == ("from.config", "memtui.toml")
    assert tree.owner("a/b/c") == ("front.matter", "inherited from a/b (front matter)")
    assert tree.owner("z") == ("root.owner", "inherited from root (front matter)")


def test_gap_folder_between_nodes_is_walked(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, "memory/AGENTS.md", "---\nowner: o\n---\n# Root\n- [Deep](gap/deeper/AGENTS.md) — deep\n")
    write(root, "memory/gap/deeper/AGENTS.md", "# Deep\n- [X](x.md) — y\n")
    write(root, "memory/gap/deeper/x.md", article("X", "y"))
    tree = MemoryTree(Workspace.open(root))
    assert list(tree.walk_nodes()) == ["", "gap/deeper"]
    assert tree.children("") == [("gap", False)]
    assert audit.run(Workspace.open(root)).findings == []


def test_a_bad_config_is_a_finding_and_defaults_apply(ws_root: Path) -> None:
    write(ws_root, "memtui.toml", "[owners\nbroken")
    assert ("config-invalid", "memtui.toml", 1) in codes(ws_root)  # the line TOML reports


def test_folder_without_memory_is_read_as_the_tree(tmp_path: Path) -> None:
    write(tmp_path / "repo", "AGENTS.md", "---\nowner: me\n---\n# Repo\n- [Docs](docs/AGENTS.md) — docs\n")
    write(tmp_path / "repo", "docs/AGENTS.md", "# Docs\n")
    ws = Workspace.open(tmp_path / "repo")
    assert ws.memory == ws.root
    report = audit.run(ws)
    assert report.nodes == 2
    assert [f.code for f in report.findings] == ["no-memory-folder"]


def test_opening_a_workspace_writes_nothing(ws_root: Path) -> None:
    before = sorted(p.relative_to(ws_root) for p in ws_root.rglob("*"))
    audit.run(Workspace.open(ws_root))
    assert sorted(p.relative_to(ws_root) for p in ws_root.rglob("*")) == before


def test_parallel_audit_finds_exactly_what_the_serial_one_finds(ws_root: Path) -> None:
    for i in range(6):
        write(ws_root, f"memory/support/n{i}/AGENTS.md", f"# N{i}\n- [A](a.md) — one\n- [Gone](gone{i}.md) — x\n")
        write(ws_root, f"memory/support/n{i}/a.md", article("A", "other" if i % 2 else "one"))
        write(ws_root, f"memory/support/n{i}/stray.md", "stray\n")
    ws = Workspace.open(ws_root)
    serial = audit.run(ws, parallel=False)
    parallel = audit.run(ws, parallel=True)
    assert serial.findings == parallel.findings
    assert (serial.nodes, serial.articles) == (parallel.nodes, parallel.articles) == (8, 13)
    # missing files, mismatches, unlisted articles, and the six nodes support/AGENTS.md does not list
    assert len(serial.findings) == 6 + 3 + 6 + 6
    assert sum(f.code == "node-unlisted" for f in serial.findings) == 6


def test_reading_an_article_never_follows_a_symlink_out_of_the_workspace(ws_root: Path, tmp_path: Path) -> None:
    """Invariant 4: the Tree's reader gets no content from outside (found by a new-user test)."""
    secret = write(tmp_path, "outside/passwd", "root:x:0:0:SECRET\n")
    os.symlink(secret, ws_root / "memory/support/pw.md")
    os.symlink(tmp_path / "outside", ws_root / "memory/support/outdir")
    tree = MemoryTree(Workspace.open(ws_root))
    for path in ("support/pw.md", "support/outdir/passwd"):
        article = tree.read_article(path)
        assert not article.ok and article.text == "" and article.body == ""
        assert [f.code for f in article.findings] == ["symlink-outside"]
    os.symlink(secret, ws_root / "memory/support/AGENTS.md.tmp")
    (ws_root / "memory/support/AGENTS.md").unlink()
    os.symlink(secret, ws_root / "memory/support/AGENTS.md")
    index = MemoryTree(Workspace.open(ws_root)).index("support")
    assert "SECRET" not in index.text and [f.code for f in index.findings] == ["symlink-outside"]


def test_the_article_cache_reuses_unchanged_files_and_rereads_changed_ones(ws_root: Path) -> None:
    import memtui.core.audit as audit_module
    from memtui.paths import cache_dir

    ws = Workspace.open(ws_root)
    first = audit.run(ws)
    assert first.findings == []
    files = list((cache_dir() / "audit").glob("*.json"))
    assert len(files) == 1 and not (ws_root / ".memtui").exists()  # never in the workspace
    calls = []
    original = MemoryTree.read_article

    def counting(self, path):
        calls.append(path)
        return original(self, path)

    MemoryTree.read_article = counting
    try:
        assert audit.run(ws).findings == []
        assert calls == []  # nothing re-read
        article_file = ws_root / "memory/support/lockout.md"
        article_file.write_text(article("Lockout", "Something else"), encoding="utf-8")
        stat = article_file.stat()
        os.utime(article_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        changed = audit.run(Workspace.open(ws_root))
        assert [f.code for f in changed.findings] == ["one-liner-mismatch"]
        assert calls == ["support/lockout.md"]
    finally:
        MemoryTree.read_article = original
    assert audit_module.run(Workspace.open(ws_root), use_cache=False).findings == changed.findings


def test_a_changed_size_limit_drops_the_cache(ws_root: Path) -> None:
    audit.run(Workspace.open(ws_root))
    write(ws_root, "memtui.toml", "[limits]\nmax_file_bytes = 20\n")
    report = audit.run(Workspace.open(ws_root))
    assert "file-too-large" in {f.code for f in report.findings}
