"""``memtui propose``: file a proposal (a candidate version of an article), as an agent or a
script does (seed 000 §2 rule 7). Anyone may propose into any node; nothing under
memory/ changes until the node's owner approves it.

A skill change is a proposal too: ``--skill NAME --from FOLDER`` files the folder's files as a
candidate version of the skill; the owner of the node the skill is bound to publishes it
(``memtui skills publish NAME@N``) once its tests passed on exactly that content."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import classify
from memtui.core import governance as gov


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("propose", help="file a proposal: a candidate version of an article",
                       description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p)
    # --node and --article are required for an article, --skill replaces both (checked in run())
    p.add_argument("--node", metavar="PATH", help="the node folder, relative to memory/ (an article)")
    p.add_argument("--article", metavar="NAME", help="the article file name (name.md)")
    p.add_argument("--skill", metavar="NAME", help="propose a change of this skill instead: --from names a folder")
    p.add_argument("--from", dest="from_file", required=True, metavar="FILE",
                   help="the article text ('-': stdin), or with --skill the folder holding the skill's files")
    p.add_argument("--case", required=True, metavar="ID", help="the proposing case")
    p.add_argument("--source-request", required=True, metavar="ID", help="the case's source-request id")
    p.add_argument("--profile", required=True, metavar="P", help="the authoring agent profile")
    p.add_argument("--profile-version", metavar="V", help="the authoring profile's version")
    p.add_argument("--source", action="append", default=[], metavar="URL", help="a source (repeatable)")
    p.add_argument("--untrusted", action="store_true", help="the content derives from untrusted input")
    p.add_argument("--title", help="the node index title (default: from the article)")
    p.add_argument("--one-liner", help="the node index one-liner (default: the article's summary)")
    p.add_argument("--new-node-owner", metavar="P", help="when --node does not exist yet: its owner")
    p.add_argument("--new-node-title", metavar="T", help="the new node's title in its parent index")
    p.add_argument("--new-node-line", metavar="TEXT", help="the new node's one-liner in its parent index")
    p.add_argument("--class", dest="cls", choices=classify.CLASSES, metavar="CLASS",
                   help=f"what the proposal is ({', '.join(classify.CLASSES)}); needs --reason")
    p.add_argument("--reason", metavar="WHY", help="why it is of that class (with --class)")
    p.add_argument("--client-id", metavar="ID", help="an id for this request (a retry is not logged twice)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.skill is not None:
        return _skill(args)
    if not args.node or not args.article:
        _common.fail("give --node PATH and --article NAME (or --skill NAME for a skill change)", ExitCode.USAGE)
    try:
        data = sys.stdin.buffer.read() if args.from_file == "-" else Path(args.from_file).read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _common.fail(f"cannot read {args.from_file} as UTF-8 text: {exc}", ExitCode.USAGE)
    if bool(args.cls) != bool(args.reason and args.reason.strip()):
        _common.fail("--class and --reason go together: give both, or neither", ExitCode.USAGE)
    with _gov.session(args, "propose") as s:
        v = gov.propose(
            s, args.node, args.article, text, case=args.case, source_request=args.source_request,
            profile=args.profile, profile_version=args.profile_version, sources=args.source,
            untrusted=args.untrusted, title=args.title, one_liner=args.one_liner,
            new_node_owner=args.new_node_owner, new_node_title=args.new_node_title,
            new_node_line=args.new_node_line, client_id=args.client_id,
            classification=classify.classification(args.cls, args.reason) if args.cls else None)
        if args.json:
            _common.emit_json(v.to_json(content=False))
        else:
            print(f"proposed {v.id}{' [untrusted]' if v.untrusted else ''}")
    return ExitCode.OK


def _skill(args: argparse.Namespace) -> int:
    from memtui.core.skills import versions as sv
    from memtui.core.skills.content import ContentError, read_content

    if args.node or args.article:
        _common.fail("--skill replaces --node and --article; give one or the other", ExitCode.USAGE)
    try:
        content = read_content(Path(args.from_file))
    except (ContentError, OSError) as exc:
        _common.fail(f"cannot read {args.from_file} as a skill folder: {exc}", ExitCode.USAGE)
    with _gov.session(args, "propose") as s:
        v = sv.propose(s, args.skill, content.files, case=args.case, source_request=args.source_request,
                       profile=args.profile, sources=args.source, client_id=args.client_id,
                       executable=content.executable)
        if args.json:
            _common.emit_json(v.to_json())
        else:
            print(f"proposed {v.id} ({len(v.files)} file{'s' if len(v.files) != 1 else ''}, content {v.sha256[:12]}; bound to {v.node or 'the root node'})")
    return ExitCode.OK
