"""The `memtui` command line: audit exit codes, JSON, help, no prompts without a terminal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memtui.cli import main


def make_ws(root: Path, broken: bool) -> Path:
    (root / "memory/n").mkdir(parents=True)
    (root / "memory/AGENTS.md").write_text("---\nowner: o\n---\n# Root\n- [N](n/AGENTS.md) — node\n")
    lines = "# N\n- [A](a.md) — one\n" + ("- [Gone](gone.md) — missing\n" if broken else "")
    (root / "memory/n/AGENTS.md").write_text(lines)
    (root / "memory/n/a.md").write_text("---\nsummary: one\nupdated: 2026-01-02\n---\nA\n")
    return root


def test_audit_exit_0_without_errors(tmp_path: Path, capsys) -> None:
    ws = make_ws(tmp_path / "ws", broken=False)
    assert main(["audit", "-w", str(ws)]) == 0
    assert "2 nodes, 1 article: 0 errors" in capsys.readouterr().out


def test_audit_exit_1_with_an_error_and_json_shape(tmp_path: Path, capsys) -> None:
    ws = make_ws(tmp_path / "ws", broken=True)
    assert main(["audit", "-w", str(ws), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["counts"]["error"] == 1
    finding = data["findings"][0]
    assert finding == {"severity": "error", "code": "index-missing-file", "path": "memory/n/AGENTS.md",
                       "line": 3, "column": None, "message": finding["message"], "fix": finding["fix"]}
    assert "gone.md" in finding["message"]


def test_audit_exit_2_when_the_workspace_cannot_be_opened(tmp_path: Path, capsys) -> None:
    try:
        main(["audit", "-w", str(tmp_path / "nope")])
    except SystemExit as exc:
        assert exc.code == 2
    else:  # pragma: no cover - must not happen
        raise AssertionError("expected exit 2")
    assert "does not exist" in capsys.readouterr().err


def test_severity_filter(tmp_path: Path, capsys) -> None:
    ws = make_ws(tmp_path / "ws", broken=True)
    (ws / "memory/n/extra.md").write_text("---\nsummary: x\n---\n")
    main(["audit", "-w", str(ws), "--severity", "error"])
    out = capsys.readouterr().out
    assert "index-missing-file" in out and "article-unlisted" not in out


def test_codes_lists_every_code(capsys) -> None:
    assert main(["audit", "--codes"]) == 0
    out = capsys.readouterr().out
    assert "index-missing-file" in out and "symlink-outside" in out


def test_runs_without_a_terminal_and_never_waits(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws", broken=False)
    done = subprocess.run([sys.executable, "-m", "memtui", "audit", "-w", str(ws)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "0 errors" in done.stdout


def test_help_lists_commands_and_exit_codes(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "audit" in out and "exit codes" in out and "memtui [PATH]" in out


def test_tui_with_a_missing_path_exits_2(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_python_m_memtui_audit_of_a_large_tree_finishes(tmp_path: Path) -> None:
    """Above the parallel threshold the audit spawns worker processes; through `python -m`
    they must not re-run the CLI, and the findings must match the node count."""
    from memtui.core.audit import PARALLEL_NODES

    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory/AGENTS.md").write_text("---\nowner: o\n---\n# Root\n")
    for i in range(PARALLEL_NODES + 10):
        node = root / "memory" / f"n{i:03d}"
        node.mkdir()
        (node / "AGENTS.md").write_text("# N\n- [A](a.md) — one\n")
        (node / "a.md").write_text("---\nsummary: one\n---\nA\n")
    done = subprocess.run([sys.executable, "-m", "memtui", "audit", "-w", str(root)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{PARALLEL_NODES + 11} nodes, {PARALLEL_NODES + 10} articles: 0 errors" in done.stdout


def test_a_file_name_with_a_newline_stays_on_one_output_line(tmp_path: Path, capsys) -> None:
    ws = make_ws(tmp_path / "ws", broken=False)
    (ws / "memory/n/two\nlines.md").write_text("---\nsummary: x\n---\n")
    main(["audit", "-w", str(ws)])
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if "article-unlisted" in l)
    assert "two\\nlines.md" in line


def test_graph_commands_read_the_servers_default_file_name(shared: Path, tmp_path: Path, capsys) -> None:
    """A folder holding the MCP server's `memory.jsonl` once listed no entity at all."""
    import shutil

    folder = tmp_path / "b17"
    shutil.copytree(shared / "bug-inputs/B17", folder)
    assert main(["graph", "entities", "-w", str(folder), "--json"]) == 0
    out = capsys.readouterr().out
    assert "--help" in out and "[/]" in out


def test_ctrl_c_while_a_command_loads_is_a_sentence_not_a_traceback(monkeypatch, capsys) -> None:
    import memtui.cli as cli

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["audit"]) == 130
    assert capsys.readouterr().err.strip() == "memtui: interrupted"


def test_every_command_module_registers_the_command_of_its_own_name() -> None:
    """The CLI imports only the module named by the command (fast start), so a module must
    register exactly the top-level command of its own name."""
    import argparse

    from memtui.cli import _command_modules, build_parser

    for name in _command_modules():
        parser = build_parser(only=name)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        assert set(sub.choices) == {name}, (name, set(sub.choices))
