"""``memtui sessions list|show|check`` and ``memtui audit allow``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def test_list_and_show_read_histories_as_turns(sample_copy: Path, capsys) -> None:  # noqa: ANN001
    code, out, _ = run_cli(capsys, "sessions", "list", "-w", str(sample_copy), "--json")
    data = json.loads(out)
    assert code == 0 and data["total"] == 2 and data["cursor"] is None
    assert {s["key"]: s["turns"] for s in data["sessions"]} == {"tg-4411-2026-11-02": 13, "tg-5820-2026-11-03": 15}
    code, out, _ = run_cli(capsys, "sessions", "show", "tg-4411-2026-11-02", "-w", str(sample_copy), "--json",
                           "--limit", "5")
    data = json.loads(out)
    assert data["count"] == 5 and data["total"] == 13 and data["cursor"] == "5"
    tool = data["turns"][3]
    assert tool["role"] == "tool" and tool["tools"][0]["name"] == "billinghub.get_cod" and "raw" not in tool
    code, out, _ = run_cli(capsys, "sessions", "show", "tg-4411-2026-11-02", "-w", str(sample_copy), "--line", "4",
                           "--limit", "1")
    assert code == 0 and out.startswith("[4] tool") and "▸ result billinghub.get_cod" in out and '"role"' not in out
    code, _, err = run_cli(capsys, "sessions", "show", "../etc", "-w", str(sample_copy))
    assert code == 1 and "is not a session key" in err


def test_check_records_and_names_the_first_changed_line(sample_copy: Path, capsys) -> None:  # noqa: ANN001
    history = sample_copy / "sessions/durable/tg-5820-2026-11-03.jsonl"
    code, out, _ = run_cli(capsys, "sessions", "check", "-w", str(sample_copy), "--record")
    assert code == 0 and "recorded 2 histories" in out
    lines = history.read_text().splitlines(keepends=True)
    history.write_text("".join(lines[:6] + ["{broken\n"] + lines[7:]))
    code, out, _ = run_cli(capsys, "sessions", "check", "-w", str(sample_copy), "--json")
    found = json.loads(out)["findings"]
    assert code == 1
    assert [(f["code"], f["line"]) for f in found if f["code"] == "session-rewritten"] == [("session-rewritten", 7)]
    assert any(f["code"] == "session-line-malformed" and f["line"] == 7 for f in found)
    code, _, err = run_cli(capsys, "sessions", "check", "-w", str(sample_copy), "--record")
    assert code == 3 and "tg-5820-2026-11-03" in err
    code, out, _ = run_cli(capsys, "sessions", "check", "-w", str(sample_copy), "--record",
                           "--accept-rewrite", "tg-5820-2026-11-03")
    assert code == 0
    code, out, _ = run_cli(capsys, "log", "-w", str(sample_copy), "--json", "--limit", "1")
    assert json.loads(out)["entries"][0]["action"] == "sessions.accept-rewrite"


def test_audit_allow_from_the_command_line(sample_copy: Path, capsys) -> None:  # noqa: ANN001
    notebook = sample_copy / "memory/MEMORY.md"
    notebook.write_text(notebook.read_text() + "\npassword=" + "correct-horse-battery" + "\n")
    line = len(notebook.read_text().splitlines())
    code, out, err = run_cli(capsys, "audit", "allow", "secret", f"memory/MEMORY.md:{line}", "-w", str(sample_copy))
    assert code == 2 and "--reason" in err  # the command line is incomplete: a usage error
    code, out, err = run_cli(capsys, "audit", "allow", "bogus", f"memory/MEMORY.md:{line}", "-w", str(sample_copy),
                             "--reason", "x")
    assert code == 2 and "cannot be allowed" in err
    code, out, _ = run_cli(capsys, "audit", "allow", "secret", f"memory/MEMORY.md:{line}", "-w", str(sample_copy),
                           "--reason", "a quoted example", "--json")
    data = json.loads(out)
    assert code == 0 and data["count"] == 1 and data["allowed"][0]["code"] == "secret"
    assert "correct-horse" not in out
    code, out, _ = run_cli(capsys, "audit", "-w", str(sample_copy), "--json")
    report = json.loads(out)
    assert report["allowed"] == 1 and not any(f["code"] == "secret" for f in report["findings"])
    code, out, _ = run_cli(capsys, "audit", "-w", str(sample_copy), "--allowed", "--json")
    assert json.loads(out)["allowed"][0]["reason"] == "a quoted example"
