"""Agents writing beside an open TUI.

A copy of the sample workspace is opened in the TUI (in tmux, on its Proposals area); two
other processes then run ``memtui propose`` / ``memtui use`` / ``memtui notes set
--base-hash`` in turns (N calls each). Every call must succeed or report a named conflict
(exit 1, saying the conflict or that the file changed on disk since its base); nothing may be lost: the store gains one proposal per
successful propose and one use per successful use, and the notes keep the line of every
successful set. Without a key press, the open TUI must show the new proposals.

Run: ``.venv/bin/python bench/agents_loop.py [--calls 100]`` (tmux must be installed; the
TUI check is skipped without it). Prints the counts and exits 1 when anything was lost or
a call failed otherwise.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEMTUI = [sys.executable, "-m", "memtui"]


def _memtui(ws: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MEMTUI, *args, "-w", str(ws)], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def _store_counts(ws: Path) -> tuple[int, int]:
    data = json.loads((ws / ".memtui" / "store.json").read_text("utf-8"))
    return len(data.get("versions", {})), len(data.get("uses", {}))


def _writer(ws: Path, who: str, calls: int, version: str, article_text: Path) -> dict[str, list[str]]:
    """One agent process's loop: ``calls`` commands in turns; returns what each call gave."""
    out: dict[str, list[str]] = {"ok": [], "conflict": [], "failed": [], "notes_lines": []}
    for i in range(calls):
        kind = ("propose", "use", "notes")[i % 3]
        tag = f"{who}-{i:03d}"
        if kind == "propose":
            done = _memtui(ws, "propose", "--node", "support/courier-app", "--article", f"agentrun-{tag}.md",
                           "--from", str(article_text), "--case", f"CASE-{tag}", "--source-request", f"SR-{tag}",
                           "--profile", "support.investigator", "--client-id", f"propose-{tag}")
        elif kind == "use":
            done = _memtui(ws, "use", "--version", version, "--case", f"CASE-U-{tag}", "--source-request",
                           f"SR-U-{tag}", "--verdict", "pass", "--check", f"checked by {tag}",
                           "--client-id", f"use-{tag}")
        else:
            base = _memtui(ws, "notes", "show", "--hash").stdout.strip()
            current = _memtui(ws, "notes", "show").stdout
            line = f"- note from {tag}\n"
            done = _memtui(ws, "notes", "set", "--from", "-", "--base-hash", base, stdin=current + line)
            if done.returncode == 0:
                out["notes_lines"].append(line)
        message = (done.stderr + done.stdout).lower()
        if done.returncode == 0:
            out["ok"].append(kind)
        elif done.returncode == 1 and ("conflict" in message or "changed on disk since" in message):
            out["conflict"].append(kind)
        else:
            out["failed"].append(f"{kind} {tag}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[:300]}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100, help="calls per writer process (default 100)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="memtui-loop-"))
    ws = tmp / "ws"
    shutil.copytree(ROOT / "sample_workspace", ws)
    article = tmp / "article.md"
    article.write_text("---\ntitle: Loop article\nsummary: written by the agents loop\n---\n# Loop article\n\n"
                       "A courier phone loses its fix in tunnels.\n", "utf-8")
    versions = json.loads(_memtui(ws, "versions", "support/courier-app/gps-drift.md", "--json").stdout)
    version = next(v["id"] for v in versions["versions"] if v["state"] == "active")
    before = _store_counts(ws)
    session = f"memtui-loop-{int(time.time())}"
    tui = shutil.which("tmux") is not None
    if tui:
        subprocess.run(["tmux", "new", "-d", "-s", session, "-x", "120", "-y", "40",
                        f"{sys.executable} -m memtui {ws}"], check=True, cwd=ROOT)
        time.sleep(4)
        subprocess.run(["tmux", "send-keys", "-t", session, "7"], check=True)
        time.sleep(2)
    started = time.monotonic()
    first_shown: list[float] = []
    running = True

    def watch_pane() -> None:  # the open TUI, never sent a key from here on
        while running and tui and not first_shown:
            pane = subprocess.run(["tmux", "capture-pane", "-t", session, "-p"], capture_output=True,
                                  text=True).stdout
            if "agentrun-" in pane:
                first_shown.append(time.monotonic() - started)
            time.sleep(0.2)

    with ThreadPoolExecutor(3) as pool:
        watcher = pool.submit(watch_pane)
        results = list(pool.map(lambda who: _writer(ws, who, args.calls, version, article), ["a", "b"]))
        running = False
        watcher.result()
    took = time.monotonic() - started
    after = _store_counts(ws)
    ok = [k for r in results for k in r["ok"]]
    notes = (ws / "memory" / "MEMORY_CUSTOM.md").read_text("utf-8")
    lost_lines = [line for r in results for line in r["notes_lines"] if line not in notes]
    print(f"{2 * args.calls} calls from 2 processes in {took:.1f} s, TUI open: {tui}")
    print(f"  succeeded: {len(ok)} ({', '.join(f'{ok.count(k)} {k}' for k in ('propose', 'use', 'notes'))})")
    conflicts = [k for r in results for k in r["conflict"]]
    print(f"  named conflicts: {len(conflicts)} ({', '.join(f'{conflicts.count(k)} {k}' for k in ('propose', 'use', 'notes'))})")
    failed = [f for r in results for f in r["failed"]]
    print(f"  other failures: {len(failed)}")
    for f in failed[:10]:
        print(f"    {f}")
    new_versions, new_uses = after[0] - before[0], after[1] - before[1]
    print(f"  store: +{new_versions} versions (proposes ok: {ok.count('propose')}), +{new_uses} uses "
          f"(uses ok: {ok.count('use')}); notes lines lost: {len(lost_lines)}")
    shown = bool(first_shown) or not tui
    if tui:
        pane = subprocess.run(["tmux", "capture-pane", "-t", session, "-p"], capture_output=True, text=True).stdout
        print(f"  open TUI (no key pressed after the start): first agent proposal on screen "
              f"{'%.1f s' % first_shown[0] if first_shown else 'NEVER'} after the loop started "
              f"(a propose call takes ~{took / (2 * args.calls):.1f} s); "
              f"{pane.count('agentrun-')} of the agents' proposals on screen at the end")
        subprocess.run(["tmux", "kill-session", "-t", session])
    lost = new_versions != ok.count("propose") or new_uses != ok.count("use") or lost_lines
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if (lost or failed or not shown) else 0


if __name__ == "__main__":
    sys.exit(main())
