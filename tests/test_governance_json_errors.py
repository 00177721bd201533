"""Governance commands under ``--json``: refusals and errors are a JSON object on stdout, and
a usage mistake is a usage error."""

from __future__ import annotations

import json


from tests.test_governance_cli import _no_tty, _run  # noqa: F401 - _no_tty is an autouse fixture
from memtui.core import governance as gov
from memtui.core.session import Session

from tests.governance_helpers import cli_propose
from tests.test_governance import CURATOR, LEAD, LOCKOUT_V1, LOCKOUT_V2, ws  # noqa: F401 - the fixture




# -- --json refusals and errors; use --origin without --origin-of ----------------------------------
def test_json_refusals_and_errors_print_a_json_object_on_stdout(ws, tmp_path, capsys):
    assert cli_propose(ws, tmp_path) == 0
    capsys.readouterr()
    vid = "support/experience/exp-1.md@1"
    assert _run(["proposals", "approve", vid, "-w", str(ws), "--json", "--reviewed"]) == 2  # no --yes, no terminal
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["ok"] is False and data["exit"] == 2 and "add --yes" in data["error"] and "add --yes" in err
    assert _run(["proposals", "show", "nope@1", "-w", str(ws), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data == {"ok": False, "error": data["error"], "exit": 1} and "nope@1" in data["error"]


def test_json_backup_refusal_prints_a_json_object(ws, capsys):
    assert _run(["backup", "-w", str(ws), "--json"]) == 2  # no repository configured
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["exit"] == 2 and "no backup repository" in data["error"]


def test_use_with_an_origin_but_no_origin_of_is_a_usage_error(ws, tmp_path, capsys):
    assert cli_propose(ws, tmp_path) == 0
    capsys.readouterr()
    code = _run(["use", "-w", str(ws), "--version", "support/experience/exp-1.md@1", "--case", "C2",
                 "--source-request", "SR2", "--verdict", "pass", "--check", "replayed", "--origin", "subcase"])
    assert code == 2 and "--origin-of" in capsys.readouterr().err
    with Session.open(ws, purpose="test", read_only=True) as s:
        assert gov.Ledger(s.store).uses("support/experience/exp-1.md@1") == []
