"""``memtui adopt [PATH]``: record untracked articles as version 1 (provenance "baseline"),
and unrecorded edits as new versions (provenance "external edit", owner only); with
``--revert ARTICLE``, put the active version back over an unrecorded edit instead (owner only).
Opening a workspace never does this silently."""

from __future__ import annotations

import argparse

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import governance as gov


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("adopt", help="record untracked articles and unrecorded edits as versions",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p, confirm=True)
    p.add_argument("path", nargs="?", metavar="PATH", help="an article or node folder (default: the whole tree)")
    p.add_argument("--revert", action="store_true", help="revert PATH (an article) to its active version instead")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with _gov.session(args, "adopt") as s:
        if args.revert:
            if not args.path:
                _common.fail("--revert needs the ARTICLE to revert: memtui adopt --revert ARTICLE", ExitCode.USAGE)
            _gov.confirm(args, s, f"Revert {args.path} to its active version")
            v = gov.revert(s, args.path)
            _gov.reindex(s, v.article)
            if args.json:
                _common.emit_json({"reverted": v.id})
            else:
                print(f"reverted {v.article} to {v.id}")
            return ExitCode.OK
        _gov.confirm(args, s, f"Adopt {args.path or 'every untracked or edited article'}")
        done = gov.adopt(s, args.path)
        for v in done:
            if v.provenance.get("kind") != "baseline":
                _gov.reindex(s, v.article)
        if args.json:
            _common.emit_json(_common.all_json("adopted", [v.to_json(content=False) for v in done]))
        else:
            for v in done:
                print(f"adopted {v.id} ({v.provenance.get('kind')})")
            if not done:
                print("nothing to adopt")
    return ExitCode.OK
