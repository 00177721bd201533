"""``memtui boot NODE``: what a node's agent boots with (seed 000 §2 rule 1).

Prints the node's own ``AGENTS.md`` and the index of every domain, within ``--budget``
bytes, then names what was truncated or omitted (seed 004: a bundle that hides its own cut
lies). ``--with-skills`` appends the skill index (seed 002) under its own budget.
"""

from __future__ import annotations

import argparse
import sys

from memtui.commands import _common
from memtui.commands._common import ExitCode, add_json_arg, add_workspace_arg, emit_json, fail, open_workspace
from memtui.core.tree.boot import DEFAULT_BOOT_BUDGET, NodeNotFoundError, build_boot
from memtui.core.skills import DEFAULT_INDEX_BUDGET


def _run(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    try:  # a path outside the workspace is refused (3) by the exit-code table
        boot = build_boot(ws, args.node, args.budget, with_skills=args.with_skills,
                          skills_budget=args.skills_budget)
    except NodeNotFoundError as exc:  # a word of the command line that names no node: usage
        fail(str(exc), ExitCode.USAGE)
    if args.json:
        emit_json(boot.to_json())
        return int(ExitCode.OK)
    sys.stdout.write(boot.text)
    print(f"\n--- boot of {boot.path}: {boot.memory_size:,} of {boot.budget:,} bytes "
          f"({len(boot.domains)} domain lines)"
          + (f"; skill index {boot.skills.size:,} of {boot.skills.budget:,} bytes" if boot.skills else ""))
    for note in boot.notes():
        print(f"--- {note}")
    return int(ExitCode.OK)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memtui boot NODE [--budget BYTES] [--with-skills] [--json]`` (the boot rule:
    seed 000 §2 rule 1; the skill index and its budget: seed 002)."""
    p = subparsers.add_parser(
        "boot", help="what a node's agent boots with: its AGENTS.md plus the index of every domain",
        description="An agent boots from its own node's AGENTS.md, and the "
                    "index of every domain is always available to it. Prints both within a byte "
                    "budget and names what was truncated or omitted.",
        epilog=_common.EXIT_CODES_HELP + "\n  (boot: 2 when NODE is not a node, 3 when it leads outside the workspace)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_workspace_arg(p)
    add_json_arg(p)
    p.add_argument("node", metavar="NODE",
                   help="the node: a path in the memory tree (platform/intake), or . for the root")
    p.add_argument("--budget", type=_common.byte_count, default=DEFAULT_BOOT_BUDGET, metavar="BYTES",
                   help=f"bytes for the own index plus the domain index (default {DEFAULT_BOOT_BUDGET})")
    p.add_argument("--with-skills", action="store_true",
                   help="append the skill index an agent's turn gets")
    p.add_argument("--skills-budget", type=_common.byte_count, default=DEFAULT_INDEX_BUDGET, metavar="BYTES",
                   help=f"bytes for the skill index (default {DEFAULT_INDEX_BUDGET})")
    p.set_defaults(func=_run)
