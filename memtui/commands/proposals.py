"""``memtui proposals``: the queue of proposals and the owner's decisions.

- ``list [--state S|all] [--class C] [--kind article|skill] [--limit N] [--cursor C]``: proposals,
  oldest first, with node, author, age, eligibility, untrusted mark; skill proposals follow,
  marked ``[skill]`` with the test state of their content (a page; ``--json``: ``{"state",
  "proposals", "count", "total", "cursor"}``, a skill proposal with ``"kind": "skill"``);
- ``show ID [--evaluate]`` (an article version, or a skill version ``skill:NAME@N``): provenance, uses, assigned cases, eligibility, the evaluation
  kept with it (``--evaluate``: what approving it would do, measured now) and the diff against
  the active version;
- ``approve ID [--reviewed] [--replace-newer] [--accept-regression --reason WHY]``: activate
  (owner only; ``--reviewed`` = a human reviewed it, needed unless two independent uses make it
  eligible); a proposal filed on an older version than the active one is refused unless
  ``--replace-newer``; it is first measured on the eval sets of the domains it sits in, and
  one that makes their figures worse is refused unless ``--accept-regression --reason WHY``;
- ``reject ID --reason TEXT``: reject (owner only; a reason is required);
- ``assign ID CASE...``: assign validation cases (owner only);
- ``ingest``: file every ``proposals/inbox/*.md``.

Proposals are absent from the tree and from normal search; this command shows them,
labelled (seed 000 §2 rule 7).
"""

from __future__ import annotations

import argparse

from memtui.core import text
from memtui.commands import _common, _gov
from memtui.commands._common import ExitCode
from memtui.core import classify
from memtui.core import governance as gov
from memtui.core.paging import Page
from memtui.core.session import Session
from memtui.core.skills.versions import SkillLedger, SkillVersion


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("proposals", help="list, show, approve, reject, assign or ingest proposals",
                            description=_common.described(__doc__), epilog=_common.EXIT_CODES_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    p = verbs.add_parser("list", help="the queue of proposals")
    _gov.add_common(p, acting=False)
    p.add_argument("--state", default="proposed", choices=(*gov.STATES, "all"),
                   help="only proposals in this state (default: proposed, the queue)")
    p.add_argument("--class", dest="cls", choices=classify.CLASSES, metavar="CLASS",
                   help=f"only proposals of this class ({', '.join(classify.CLASSES)}): what a migration "
                        "or a harvest classified them as")
    p.add_argument("--kind", choices=KINDS,
                   help="only article proposals or only skill proposals (default: both; skills follow articles)")
    _common.add_page_args(p, "proposals")
    p.set_defaults(func=run_list)
    p = verbs.add_parser("show", help="one proposal with its provenance, uses and diff")
    _gov.add_common(p, acting=False)
    p.add_argument("id", metavar="ID")
    p.add_argument("--evaluate", action="store_true",
                   help="measure now what approving it would do to the eval sets of its domains (nothing is changed)")
    p.set_defaults(func=run_show)
    p = verbs.add_parser("approve", help="activate a proposal (owner only)")
    _gov.add_common(p, confirm=True)
    p.add_argument("id", metavar="ID")
    p.add_argument("--reviewed", action="store_true", help="a human reviewed it (needed unless eligible by uses)")
    p.add_argument("--why", default="", help="a note recorded with the decision")
    p.add_argument("--replace-newer", action="store_true",
                   help="approve a proposal filed on an older version than the active one, knowingly "
                        "replacing the newer change (recorded in the decision); refused without it")
    _gov.add_regression_args(p, reason=True)
    p.set_defaults(func=run_approve)
    p = verbs.add_parser("reject", help="reject a proposal with a reason (owner only)")
    _gov.add_common(p, confirm=True)
    p.add_argument("id", metavar="ID")
    p.add_argument("--reason", required=True, help="why it is rejected (recorded with the decision)")
    p.set_defaults(func=run_reject)
    p = verbs.add_parser("assign", help="assign validation cases to a proposal (owner only)")
    _gov.add_common(p)
    p.add_argument("id", metavar="ID")
    p.add_argument("cases", nargs="+", metavar="CASE")
    p.set_defaults(func=run_assign)
    p = verbs.add_parser("ingest", help=f"file every {gov.INBOX}/*.md as a proposal",
                         description=INBOX_FORMAT, formatter_class=argparse.RawDescriptionHelpFormatter)
    _gov.add_common(p)
    p.add_argument("--inbox", default=gov.INBOX, help=f"the inbox folder (default {gov.INBOX})")
    p.set_defaults(func=run_ingest)


INBOX_FORMAT = f"""File every {gov.INBOX}/*.md as a proposal; each file is removed only after its
proposal is stored (an interrupted ingest loses nothing and doubles nothing).

An inbox file is the article with extra front-matter fields:

  ---
  node: support/experience        # required: the node folder, relative to memory/
  article: exp-013.md             # required: the article file name
  case: C-1042                    # required: the proposing case
  source_request: SR-77           # required: the case's source-request id
  profile: support.investigator   # required: the authoring agent profile
  profile_version: "3"            # optional: the profile's version
  sources: [https://x.example]    # optional: a list (or one string) of URLs/paths
  untrusted: true                 # optional: the content derives from untrusted input
  new_node_owner: support.sso     # optional: owner when the node does not exist yet
  new_node_title: Single sign-on  # optional: the new node's title in its parent index
  new_node_line: SSO redirects    # optional: the new node's one-liner in its parent index
  title: Lockout after SSO        # article metadata: kept, also the index line's title
  summary: One line for the index # article metadata: kept, also the index one-liner
  ---
  # The article body...

The governance fields ({", ".join(gov.INBOX_FIELDS)}) are removed from the stored
article; every other field (title, summary, tags...) stays in its front matter.
A file that is not UTF-8 or misses a required field stays in the inbox and is reported
(exit 1)."""


def _reader(args: argparse.Namespace) -> Session:
    return _gov.reading(args, "proposals")


KINDS = ("article", "skill")


def _skill_line(v: SkillVersion, skills: SkillLedger) -> str:
    """One skill proposal in the queue: marked ``[skill]``, with the test state of its content."""
    return f"{v.id}  {v.state}  {v.author or '-'}  {v.created}  [skill]  {skills.test_state(v)}"


def run_list(args: argparse.Namespace) -> int:
    with _reader(args) as s:
        ledger = gov.Ledger(s.store)
        skills = SkillLedger(s.store)
        state = None if args.state == "all" else args.state
        queue: list[gov.Version | SkillVersion] = []
        if args.kind != "skill":
            articles = ledger.queue(state)
            queue.extend(classify.of_class(articles, args.cls) if args.cls else articles)
        if args.kind != "article" and not args.cls:  # a skill proposal has no class
            queue.extend(skills.proposals(state))
        page = Page.of(queue, args.cursor or 0, args.limit)
        if args.json:
            owners = {node: gov.owner_of(s.ws, node)[0] for node in {v.node for v in page.items}}
            _common.emit_json(_common.page_json("proposals", page, [
                {"kind": "skill", **v.to_json(), "owner": owners[v.node], "tests": skills.test_state(v),
                 "eligibility": gov.eligibility(ledger, v.as_version()).to_json()}
                if isinstance(v, SkillVersion) else
                {**v.to_json(content=False), "owner": owners[v.node],
                 "eligibility": gov.eligibility(ledger, v).to_json()} for v in page.items], state=args.state,
                **({"class": args.cls} if args.cls else {}), **({"kind": args.kind} if args.kind else {})))
        else:
            for v in page.items:
                print(_skill_line(v, skills) if isinstance(v, SkillVersion) else _gov.version_line(v, ledger))
            _common.print_more(page, "proposals")
            if not page.total:
                of = f" of class {args.cls}" if args.cls else ""
                print(f"no proposals{of}" if args.state == "all" else f"no {args.state} proposals{of}")
    return ExitCode.OK


def _show_skill(args: argparse.Namespace, s: Session) -> int:
    """``show skill:NAME@N``: a skill version with its provenance, test state, eligibility, the
    evaluation kept with it (``--evaluate``: what publishing it would do, measured now) and
    the diff against the published version."""
    from memtui.core.skills import versions as sv

    skills = SkillLedger(s.store)
    v = skills.get(args.id)
    active = skills.active(v.skill)
    owner = gov.owner_of(s.ws, v.node)[0]
    e = gov.eligibility(gov.Ledger(s.store), v.as_version())
    patch = sv.diff(skills, v.skill, active.number, v.number) if active and active.number != v.number else ""
    record = v.provenance.get("evaluation")
    measured_now = args.evaluate and v.state == "proposed"
    if measured_now:
        ev = sv.evaluate_change(s, "publish", v.skill, ref=v.id, reviewed=True, progress=_gov._progress(),
                                as_profile=owner)
        record = ev.to_json() if ev else None
    if args.json:
        _common.emit_json({"kind": "skill", **v.to_json(), "owner": owner, "tests": skills.test_state(v),
                           "eligibility": e.to_json(), "diff": patch, "evaluation": record})
        return ExitCode.OK
    prov = v.provenance
    print(f"{v.id}: {v.state}  [skill]")
    print(f"  skill: {v.skill}  node: {v.node or '(root)'}  content {v.sha256[:12]}  {skills.test_state(v)}")
    print(f"  provenance: {prov.get('kind')}  case {prov.get('case') or '-'}  source request "
          f"{prov.get('source_request') or '-'}  by {v.author or '-'}")
    if prov.get("rollback_of"):
        print(f"  rollback of version {prov['rollback_of']}")
    for label, d in (("decision", v.decision), ("retired", v.retirement)):
        if d:
            print(f"  {label}: {d.get('action')} by {d.get('by')} at {d.get('at')}: {d.get('why')}")
    print(f"  owner: {owner or '(none)'}")
    if v.state == "proposed":
        print(f"  eligibility: {e.summary}")
    if measured_now and record is None:
        print("  evaluation: the skill is gated on no eval set")
    if record:
        print("  evaluation:" if not measured_now else "  evaluation (measured now, if published):")
        _gov.print_evaluation(record)
    print(text.visible_lines(patch) if patch else "", end="")
    return ExitCode.OK


def run_show(args: argparse.Namespace) -> int:
    with _reader(args) as s:
        if args.id.startswith("skill:"):  # a skill version (skill:NAME@N)
            return _show_skill(args, s)
        ledger = gov.Ledger(s.store)
        v = ledger.get(args.id)
        active = ledger.active(v.article)
        e = gov.eligibility(ledger, v)
        uses = ledger.uses(v.id)
        cases = ledger.assignments(v.id)
        owner = gov.owner_of(s.ws, v.node)[0]
        patch = text.unified_diff(active.content if active else "", v.content,
                         f"{v.article}@{active.number}" if active else "(none)", v.id)
        if args.json:
            measured = _measure(s, v) if args.evaluate else None
            _common.emit_json({**v.to_json(), "owner": owner, "eligibility": e.to_json(),
                               "uses": [u.to_json() for u in uses], "assigned": cases, "diff": patch,
                               "evaluation": (measured.to_json() if measured else None) if args.evaluate
                               else v.provenance.get("evaluation")})
            return ExitCode.OK
        _gov.print_version(v)
        print(f"  owner: {owner or '(none)'}")
        print(f"  eligibility: {e.summary}")
        for r in e.reasons[1:]:
            print(f"    - {r}")
        for u in uses:
            print(f"  use: case {u.case} ({u.origin}{' of ' + u.origin_of if u.origin_of else ''}) "
                  f"source request {u.source_request}: {u.verdict} — {u.check}")
        for a in cases:
            print(f"  assigned validation case: {a['case']} (by {a['by']})")
        _show_evaluation(args, s, v)
        print(patch, end="")
    return ExitCode.OK


def _measure(s: Session, v: gov.Version) -> gov.Evaluation | None:
    """What approving the proposal ``v`` would do to its domains' eval sets (read-only)."""
    return gov.evaluate_change(s, "approve", version_id=v.id, reviewed=True, replace_newer=True,
                               progress=_gov._progress(), as_profile=gov.owner_of(s.ws, v.node)[0])


def _show_evaluation(args: argparse.Namespace, s: Session, v: gov.Version) -> None:
    """The evaluation kept with ``v`` (a decided version), or, with ``--evaluate``, one made now."""
    record = v.provenance.get("evaluation")
    if args.evaluate and v.state == "proposed":
        measured = _measure(s, v)
        record = measured.to_json() if measured else None
        if record is None:
            print("  evaluation: no domain of this proposal has an eval set")
    if record:
        print("  evaluation:" if not args.evaluate else "  evaluation (measured now, if approved):")
        _gov.print_evaluation(record)


def run_approve(args: argparse.Namespace) -> int:
    with _gov.session(args, "proposals approve") as s:
        try:  # refused before asking: a person never confirms what is then refused
            gov.check_approval(s, args.id, reviewed=args.reviewed, replace_newer=args.replace_newer)
            ev = _gov.evaluate(args, s, "approve", version_id=args.id, reviewed=args.reviewed,
                               replace_newer=args.replace_newer)
            _gov.confirm(args, s, f"Approve {args.id}{' (human review)' if args.reviewed else ''}")
            v = gov.approve(s, args.id, reviewed=args.reviewed, why=args.why, replace_newer=args.replace_newer,
                            accept_regression=_gov.accepted(args), evaluation=ev, progress=_gov._progress())
        except gov.NeedsReview as exc:
            _common.fail(f"refused: {exc} (add --reviewed once you have read `memtui proposals show "
                         f"{args.id}`). Nothing was changed.", ExitCode.REFUSED)
        _gov.reindex(s, v.article)
        if args.json:
            _common.emit_json(v.to_json(content=False))
        else:
            print(f"activated {v.id} ({(v.decision or {}).get('why', '')})")
            if v.provenance.get("evaluation") and v.provenance["evaluation"].get("accepted_regression"):
                print(f"regression accepted: {v.provenance['evaluation'].get('reason')}")
    return ExitCode.OK


def run_reject(args: argparse.Namespace) -> int:
    with _gov.session(args, "proposals reject") as s:
        _gov.confirm(args, s, f"Reject {args.id}")
        v = gov.reject(s, args.id, args.reason)
        if args.json:
            _common.emit_json(v.to_json(content=False))
        else:
            print(f"rejected {v.id}: {args.reason}")
    return ExitCode.OK


def run_assign(args: argparse.Namespace) -> int:
    with _gov.session(args, "proposals assign") as s:
        done = gov.assign(s, args.id, args.cases)
        if args.json:
            _common.emit_json({"version": args.id, "assigned": done})
        else:
            print(f"assigned to {args.id}: {', '.join(done)}")
    return ExitCode.OK


def run_ingest(args: argparse.Namespace) -> int:
    with _gov.session(args, "proposals ingest") as s:
        stored, findings = gov.ingest(s, args.inbox)
        if args.json:
            _common.emit_json({"stored": [v.to_json(content=False) for v in stored],
                               "findings": [f.to_json() for f in findings]})
        else:
            for v in stored:
                print(f"proposed {v.id}{' [untrusted]' if v.untrusted else ''}")
            for f in findings:
                print(f"memtui: {f.place}: {f.message}")
    return ExitCode.PROBLEM if findings else ExitCode.OK
