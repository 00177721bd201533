"""Parsing node indexes (AGENTS.md) tolerantly (seed 000 §1)."""

from __future__ import annotations

from memtui.core.tree.index import parse_index


def test_entries_with_every_tolerated_separator_and_bullet() -> None:
    text = (
        "# Support\n\n"
        "- [Lockout](lockout.md) — Reset rules\n"
        "* [VPN](vpn.md) – Tunnel checks\n"
        "- [SSO](sso.md) - Single sign-on\n"
        "+ [Roles](roles.md): Office scope\n"
        "1. [Forms](forms.md) -- Printing\n"
        "- [Bare](bare.md)\n"
        "- [Child](child/AGENTS.md) — a child node\n"
        "- [Web](https://example.org/x.md) — external, not an entry\n"
        "- plain rule without a link\n"
    )
    index = parse_index(text, "support", "memory/support/AGENTS.md")
    got = [(e.target, e.one_liner, e.line) for e in index.entries]
    assert got == [
        ("lockout.md", "Reset rules", 3),
        ("vpn.md", "Tunnel checks", 4),
        ("sso.md", "Single sign-on", 5),
        ("roles.md", "Office scope", 6),
        ("forms.md", "Printing", 7),
        ("bare.md", None, 8),
    ]
    assert [e.path for e in index.entries][:1] == ["support/lockout.md"]
    assert [c.path for c in index.children] == ["support/child/AGENTS.md"]
    assert index.title == "Support"
    assert index.findings == []


def test_lines_in_code_fences_are_not_entries() -> None:
    text = "```\n- [Example](example.md) — inside a fence\n```\n- [Real](real.md) — outside\n"
    index = parse_index(text, "", "memory/AGENTS.md")
    assert [e.target for e in index.entries] == ["real.md"]


def test_duplicate_entry_is_a_finding_on_the_second_line() -> None:
    text = "- [A](a.md) — one\n- [B](b.md) — two\n- [A again](./a.md) — three\n"
    index = parse_index(text, "n", "memory/n/AGENTS.md")
    codes = [(f.code, f.line) for f in index.findings]
    assert codes == [("index-duplicate", 3)]
    assert "first on line 1" in index.findings[0].message


def test_front_matter_owner_and_line_numbers_after_it() -> None:
    text = "---\nowner: support.curator\n---\n# Node\n- [A](a.md) — one\n"
    index = parse_index(text, "n", "memory/n/AGENTS.md")
    assert index.meta == {"owner": "support.curator"}
    assert index.entries[0].line == 5


def test_titles_with_brackets_and_link_leaving_the_tree() -> None:
    text = "- [[/] odd [x]](odd.md) — brackets\n- [Up](../../outside.md) — leaves\n"
    index = parse_index(text, "n", "memory/n/AGENTS.md")
    assert index.entries[0].title == "[/] odd [x]"
    assert index.entries[1].path is None


def test_suggested_index_line_for_awkward_file_names_parses_back() -> None:
    """The audit's suggested line for `name with spaces [x].md` once did not list the file."""
    from memtui.core.tree.index import index_line

    for name in ("name with spaces [x].md", "a(b).md", "plain.md", "ünï cödé.md"):
        line = index_line("Title [x]\nsecond", name, "one")
        index = parse_index(line + "\n", "n", "memory/n/AGENTS.md")
        assert [e.path for e in index.entries] == [f"n/{name}"], line
        assert index.entries[0].one_liner == "one"
        assert index.entries[0].title == "Title [x] second"
