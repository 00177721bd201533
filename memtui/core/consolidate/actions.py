"""The consolidation actions (seed 000 §4 step 5, §7.3, §7.4b): each is one guarded write
(:meth:`memtui.core.session.Session.write`, recorded in the audit log), and only the owner
of the node concerned may do it (:func:`check_owner` refuses a non-owner before anyone is
asked to confirm).

==================  ==========================================  ============================
action              what it writes                              undone by
==================  ==========================================  ============================
:func:`merge`       a proposal for the kept article, carrying   rejecting the proposal; once
                    the other's aliases and links; approving    approved, rolling back both
                    it retires the other and leaves a redirect  articles (the redirect goes
                    line in its node index                      when the article is back)
:func:`contest`     a ``contests`` record: the active version   :func:`resolve`
                    is contested (it stays active)
:func:`resolve`     the contests' resolution, naming why        :func:`contest` again
:func:`reverify`    a ``checks`` record (and a pin), like a     nothing: a check is evidence,
                    use; a contradiction also contests          kept as recorded
:func:`refresh_line`  the node index line's one-liner, set to   :func:`undo_refresh_line`
                    the article's ``summary``
==================  ==========================================  ============================

Stale entries are retired with :func:`memtui.core.governance.retire`.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Iterable

from tinydb import Query

from memtui.core import atomic, frontmatter
from memtui.core.auditlog import AuditEntry
from memtui.core.consolidate.duplicates import name_key
from memtui.core.errors import ConflictError
from memtui.core.governance.intents import insert_version, version_record
from memtui.core.governance.model import (
    Check, Contest, GovernanceError, Ledger, T_CHECKS, T_CONTESTS, T_PINS, VERDICTS, Version, shown_path,
    contest_record, node_of, normalise_article, now,
)
from memtui.core.governance.rules import require_owner
from memtui.core.tree.index import index_with_line, iter_links, one_liner_matches, parse_index
from memtui.core.workspace import NODE_INDEX

#: Audit actions of this module.
A_MERGE, A_CONTEST, A_RESOLVE, A_REVERIFY = ("consolidate.merge", "consolidate.contest",
                                             "consolidate.resolve", "consolidate.reverify")
A_REFRESH, A_REFRESH_UNDO = "consolidate.refresh-line", "consolidate.refresh-line-undo"


def check_owner(session, articles: Iterable[str], action: str) -> None:  # noqa: ANN001 - Session
    """Refuse unless the acting profile owns the node of every article in ``articles`` (called
    before a confirmation is asked, and again under the lock by each action).

    Raises:
        RefusedError: no profile, no owner, or another owner (named). GovernanceError: a path
        that is not an article.
    """
    for article in articles:
        require_owner(session, node_of(normalise_article(article)), action)


def _active(ledger: Ledger, article: str, what: str) -> Version:
    active = ledger.active(article)
    if active is None:
        raise GovernanceError(f"{article} has no active version to {what}; adopt it first "
                              f"(`memtui adopt {article}`) or publish one.")
    return active


# -- merge ---------------------------------------------------------------------------------------

def _rebase(target: str, from_node: str, to_node: str) -> str | None:
    """A link ``target`` written in ``from_node`` as written from ``to_node`` (``None`` when it
    leaves the memory tree)."""
    if target.startswith("/"):
        return None
    joined = os.path.normpath(os.path.join(from_node, target))
    if joined == ".." or joined.startswith("../"):
        return None
    return os.path.relpath(joined, to_node or ".").replace(os.sep, "/")


def _list_of(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float)) and str(v).strip()]
    if isinstance(value, str) and value.strip():
        return [value]
    return []


_TOP = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)[ \t]*:")


def _set_keys(text: str, values: dict[str, list[str]]) -> str:
    """``text`` with the top-level front matter keys of ``values`` set to those lists (one
    JSON flow line each: JSON is YAML), every other line kept byte for byte; a file without
    front matter gets one."""
    fm = frontmatter.split(text)
    eol = "\r\n" if "\r\n" in text else "\n"
    lines = [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in values.items()]
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    if not fm.present or not fm.closed:
        return bom + "---" + eol + eol.join(lines) + eol + "---" + eol + text[len(bom):]
    raw = text[len(bom):].splitlines(keepends=True)
    close = fm.body_line - 2  # 0-based index of the closing fence
    block = raw[1:close]
    out: list[str] = []
    skip = False
    done: set[str] = set()
    for line in block:
        match = _TOP.match(line)
        if match:
            skip = False
            key = match.group("key")
            if key in values:
                out.append(f"{key}: {json.dumps(values[key], ensure_ascii=False)}{eol}")
                done.add(key)
                skip = True
                continue
        elif skip and (line[:1] in (" ", "\t", "-") or not line.strip()):
            continue  # the rest of a block value being replaced
        else:
            skip = False
        out.append(line)
    for key, value in values.items():
        if key not in done:
            out.append(f"{key}: {json.dumps(value, ensure_ascii=False)}{eol}")
    return bom + raw[0] + "".join(out) + "".join(raw[close:])


def merge_content(keep: Version, drop: Version) -> str:
    """The text of ``keep`` with ``drop``'s title and aliases added to its ``aliases`` and
    ``drop``'s links (front matter ``links`` and the local links of its body, rebased to
    ``keep``'s node) added to its ``links`` (seed 000 §4 step 5: a merge carries them over).
    Names already present (compared as :func:`~memtui.core.consolidate.duplicates.name_key`)
    and links to either article are not added; the body is kept as it is."""
    kfm, dfm = frontmatter.split(keep.content), frontmatter.split(drop.content)
    kmeta = kfm.meta if isinstance(kfm.meta, dict) else {}
    dmeta = dfm.meta if isinstance(dfm.meta, dict) else {}
    aliases = _list_of(kmeta.get("aliases"))
    seen = {name_key(a) or a.casefold() for a in [*aliases, keep.title]}
    for name in [drop.title, *_list_of(dmeta.get("aliases"))]:
        key = name_key(name) or name.casefold()
        if key not in seen:
            seen.add(key)
            aliases.append(name)
    links = _list_of(kmeta.get("links"))
    have = {os.path.normpath(os.path.join(keep.node, t)) for t in links}
    itself = {keep.article, drop.article}
    carried = _list_of(dmeta.get("links")) + [t for _, t in iter_links(dfm.body)]
    for target in carried:
        rebased = _rebase(target, drop.node, keep.node)
        if rebased is None:
            continue
        resolved = os.path.normpath(os.path.join(keep.node, rebased)).replace(os.sep, "/")
        if resolved in itself or resolved in have:
            continue
        have.add(resolved)
        links.append(rebased)
    values: dict[str, list[str]] = {"aliases": aliases}
    if links or "links" in kmeta:
        values["links"] = links
    return _set_keys(keep.content, values)


def merge(session, keep: str, drop: str, *, reason: str = "", case: str | None = None,  # noqa: ANN001
          client_id: str | None = None) -> Version:
    """File the merge of ``drop`` into ``keep``: a proposal for ``keep`` holding
    :func:`merge_content`, which, once its owner approves it (``memtui proposals approve``,
    the Proposals area), retires ``drop`` and leaves a redirect line to ``keep`` in ``drop``'s
    node index (seed 000 §4 step 5). Owner of both nodes only.

    Returns:
        The proposal (state ``proposed``; ``merge`` names what it retires).

    Raises:
        RefusedError: not the owner of both nodes. GovernanceError: the same article twice,
        or one has no active version.
    """
    keep, drop = normalise_article(keep), normalise_article(drop)
    if keep == drop:
        raise GovernanceError("an article cannot be merged into itself.")
    check_owner(session, [keep, drop], "merge articles")
    request = {"keep": keep, "drop": drop, "reason": reason, "case": case}

    def change(tx) -> Version:  # noqa: ANN001 - Tx
        check_owner(session, [keep, drop], "merge articles")
        ledger = Ledger(session.store)
        kept, dropped = _active(ledger, keep, "merge into"), _active(ledger, drop, "merge")
        for v in ledger.versions(keep):
            if v.state == "proposed" and (v.merge or {}).get("retire") == drop:
                raise GovernanceError(f"{v.id} already proposes this merge; approve or reject it.")
        content = merge_content(kept, dropped)
        prov = {"kind": "proposal", "case": (case or "").strip() or None, "source_request": None,
                "sources": [shown_path(session.ws, drop)], "human_reviewed": False,
                "untrusted": kept.untrusted or dropped.untrusted, "merge_of": dropped.id}
        data = version_record(session.ws, ledger, keep, content, author=session.profile, profile_version=None,
                               provenance=prov, state="proposed", title=kept.title, one_liner=kept.one_liner)
        data["provenance"]["untrusted"] = kept.untrusted or dropped.untrusted
        data["merge"] = {"retire": drop, "retire_version": dropped.id, "reason": reason.strip()}
        version = insert_version(session.store, data)
        tx.hashes(kept.sha256, version.sha256)
        tx.detail.update({"version": version.id, "retires": dropped.id, "reason": reason.strip()})
        return version

    done = session.write(A_MERGE, shown_path(session.ws, keep), change, client_id=client_id, request=request)
    if done.retried:
        return Ledger(session.store).get(done.entry.detail["version"])
    return done.result


# -- contested knowledge -------------------------------------------------------------------------

def contest(session, article: str, *, reason: str, case: str | None = None,  # noqa: ANN001
            against: str | None = None, client_id: str | None = None) -> Contest:
    """Mark ``article``'s active version **contested** by ``case`` or the article ``against``,
    for ``reason`` (seed 000 §4 step 5); it stays active and every consumer shows the mark
    (:meth:`~memtui.core.governance.Ledger.marks`). Owner only.

    Raises:
        RefusedError: not the owner. GovernanceError: no reason, neither a case nor an
        article named, ``against`` is the article itself, or nothing is active.
    """
    article = normalise_article(article)
    if not (reason or "").strip():
        raise GovernanceError("a contest needs its reason (--reason); nothing was recorded.")
    other = normalise_article(against) if against and against.strip() else None
    if not (case or "").strip() and other is None:
        raise GovernanceError("name what contradicts it: the case (--case) or the article (--against).")
    if other == article:
        raise GovernanceError("an article cannot contradict itself; name the other article.")
    check_owner(session, [article], "mark knowledge contested")

    def change(tx) -> Contest:  # noqa: ANN001 - Tx
        check_owner(session, [article], "mark knowledge contested")
        version = _active(Ledger(session.store), article, "contest")
        record = contest_record(tx.table(T_CONTESTS), version, reason=reason, case=case, against=other,
                                source="owner", by=session.profile)
        tx.hashes(version.sha256, version.sha256)
        tx.detail.update({"contest": record.id, "version": version.id, "case": record.case,
                          "against": record.against, "reason": record.reason})
        return record

    done = session.write(A_CONTEST, shown_path(session.ws, article), change, client_id=client_id,
                         request={"reason": reason.strip(), "case": case, "against": other})
    if done.retried:
        wanted = done.entry.detail.get("contest")
        return next(c for c in Ledger(session.store).contests(article) if c.id == wanted)
    return done.result


def resolve(session, article: str, *, why: str, client_id: str | None = None) -> list[Contest]:  # noqa: ANN001
    """Resolve every open contest of ``article``'s active version, naming ``why`` (the mark
    goes; the records stay, with their resolution). Owner only.

    Returns:
        The contests as resolved.

    Raises:
        RefusedError: not the owner. GovernanceError: no reason given, or nothing contested.
    """
    article = normalise_article(article)
    if not (why or "").strip():
        raise GovernanceError("a resolution names why (--why); nothing was recorded.")
    check_owner(session, [article], "resolve contested knowledge")

    def change(tx) -> list[Contest]:  # noqa: ANN001 - Tx
        check_owner(session, [article], "resolve contested knowledge")
        ledger = Ledger(session.store)
        version = _active(ledger, article, "resolve")
        open_ = ledger.open_contests(article)
        if not open_:
            raise GovernanceError(f"{version.id} is not contested; nothing to resolve.")
        resolution = {"by": session.profile, "at": now(), "why": why.strip()}
        table = tx.table(T_CONTESTS)
        for c in open_:
            table.update({"resolution": resolution}, Query().id == c.id)
        tx.hashes(version.sha256, version.sha256)
        tx.detail.update({"version": version.id, "resolved": [c.id for c in open_], "why": why.strip()})
        return [c for c in Ledger(session.store).contests(article) if c.id in {o.id for o in open_}]

    done = session.write(A_RESOLVE, shown_path(session.ws, article), change, client_id=client_id,
                         request={"why": why.strip()})
    if done.retried:
        ids = set(done.entry.detail.get("resolved") or [])
        return [c for c in Ledger(session.store).contests(article) if c.id in ids]
    return done.result


# -- stale entries ---------------------------------------------------------------------------------

def reverify(session, article: str, *, case: str, source_request: str, verdict: str, check: str,  # noqa: ANN001
             environment: str | None = None, observed_version: str | None = None,
             client_id: str | None = None) -> Check:
    """Record that ``case`` re-verified ``article``'s active version against the running
    system (seed 000 §7.3), with its ``verdict``, and pin the case to it. A passing check
    makes the entry fresh again (its time, and ``observed_version`` when given, replace the
    front matter's for staleness); a ``contradiction`` also contests the version. Owner only.

    Raises:
        RefusedError: not the owner. GovernanceError: bad verdict, no check, no case or
        source request, nothing active.
    """
    article = normalise_article(article)
    if verdict not in VERDICTS:
        raise GovernanceError(f"verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}.")
    if not (check or "").strip():
        raise GovernanceError("a re-verification needs the check performed (--check).")
    if not (case or "").strip() or not (source_request or "").strip():
        raise GovernanceError("a re-verification needs its case id and source-request id.")
    check_owner(session, [article], "re-verify entries")
    request = {"case": case.strip(), "source_request": source_request.strip(), "verdict": verdict,
               "check": check.strip(), "environment": environment, "observed_version": observed_version}

    def change(tx) -> Check:  # noqa: ANN001 - Tx
        check_owner(session, [article], "re-verify entries")
        version = _active(Ledger(session.store), article, "re-verify")
        record = Check(article, version.id, version.sha256, case.strip(), source_request.strip(), verdict,
                       check.strip(), (environment or "").strip() or None, (observed_version or "").strip() or None,
                       now(), session.profile)
        tx.table(T_CHECKS).insert(record.to_json())
        tx.table(T_PINS).insert({"case": record.case, "version": version.id, "hash": version.sha256,
                                 "time": record.time})
        tx.hashes(version.sha256, version.sha256)
        tx.detail.update({"version": version.id, "case": record.case, "verdict": verdict})
        if verdict == "contradiction":
            contested = contest_record(tx.table(T_CONTESTS), version, reason=f"re-verification by case "
                                       f"{record.case} found a contradiction: {record.check}", case=record.case,
                                       against=None, source="check", by=session.profile)
            tx.detail["contested"] = contested.id
        return record

    done = session.write(A_REVERIFY, shown_path(session.ws, article), change, client_id=client_id, request=request)
    if done.retried:
        found = [c for c in Ledger(session.store).checks(article) if c.case == case.strip()]
        return found[-1]
    return done.result


# -- one-liners ------------------------------------------------------------------------------------

def _index_of(session, article: str) -> tuple[str, str]:  # noqa: ANN001
    node = node_of(article)
    rel = f"{node}/{NODE_INDEX}" if node else NODE_INDEX
    return node, shown_path(session.ws, rel)


def _decode(data: bytes | None, shown: str) -> str:
    if data is None:
        raise GovernanceError(f"{shown} does not exist.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GovernanceError(f"{shown} is not UTF-8 text; fix it first") from exc


def _set_one_liner(tx, article: str, want_before: str | None, new: str | None = None) -> dict[str, Any]:  # noqa: ANN001
    """Within ``tx``: set ``article``'s index one-liner to ``new`` (default: its summary);
    ``want_before``, when given, is the one-liner the line must still hold."""
    session = tx.session
    node, shown = _index_of(session, article)
    data = tx.read(shown)
    text = _decode(data, shown)
    index = parse_index(text, node, shown)
    entry = next((e for e in index.entries if e.path == article), None)
    if entry is None:
        raise GovernanceError(f"{article} is not listed in {shown}; there is no index line to refresh.")
    before = entry.one_liner or ""
    if want_before is not None and " ".join(before.split()) != " ".join(want_before.split()):
        raise ConflictError(f"the index line of {article} changed since (it says {before!r} now); "
                            "nothing was written.")
    if new is None:
        article_shown = shown_path(session.ws, article)
        meta = frontmatter.split(_decode(tx.read(article_shown), article_shown)).meta
        summary = meta.get("summary") if isinstance(meta, dict) else None
        if not isinstance(summary, str) or not summary.strip():
            raise GovernanceError(f"{article} has no summary in its front matter to refresh the one-liner from.")
        new = " ".join(summary.split())
        if entry.one_liner is not None and one_liner_matches(entry.one_liner, summary):
            raise GovernanceError(f"the index line of {article} already says its summary.")
    updated = index_with_line(text, node, entry.target, entry.title, new)
    tx.replace(shown, updated.encode("utf-8"), base=atomic.sha256(data or b""))
    detail = {"article": article, "line": entry.line, "before": before, "after": new}
    tx.detail.update(detail)
    return {"index": shown, **detail}


def refresh_line(session, article: str, *, client_id: str | None = None,  # noqa: ANN001
                 accept_regression: str | None = None, evaluation: Any = None,
                 progress: Any = None) -> dict[str, Any]:
    """Set ``article``'s node index one-liner to the article's ``summary``: the owner's own
    write of the index line, no proposal (the index is the owner's; seed 000 §4 step 5).

    Returns:
        ``{"index", "article", "line", "before", "after"}``.

    Raises:
        RefusedError: not the owner of the node. GovernanceError: not listed, no summary, or
        the line already says it. ConflictError: the index changed under the write.
        RegressionRefused: the new one-liner makes a domain's eval figures worse, not accepted
        (``accept_regression``, ``evaluation``, ``progress`` as for
        :func:`memtui.core.governance.approve`; the evaluation goes into the audit entry).
    """
    from memtui.core.governance import gate

    article = normalise_article(article)
    check_owner(session, [article], "refresh the node's one-liners")
    _, shown = _index_of(session, article)

    def act(ev: Any) -> dict[str, Any]:
        def change(tx) -> dict[str, Any]:  # noqa: ANN001 - Tx
            record = gate.inside(tx, ev, accept_regression)
            check_owner(session, [article], "refresh the node's one-liners")
            out = _set_one_liner(tx, article, None)
            if record:
                out["evaluation"] = record
            return out

        done = session.write(A_REFRESH, shown, change, client_id=client_id, request={"article": article})
        if done.retried:
            return {"index": shown, **{k: done.entry.detail.get(k) for k in ("article", "line", "before", "after")}}
        return done.result

    return gate.run(session, lambda: evaluate_refresh(session, article, progress), act, evaluation, accept_regression)


def evaluate_refresh(session, article: str, progress: Any = None) -> Any:  # noqa: ANN001 - Session
    """Measure what refreshing ``article``'s one-liner would do to the eval sets of its domains,
    without doing it (:func:`memtui.core.governance.evaluate_change` with this refresh replayed
    in its scratch copy).

    Returns:
        The :class:`~memtui.core.governance.gate.Evaluation`, or ``None`` (no eval set).
    """
    from memtui.core.governance import gate
    from memtui.core.governance.actions import evaluate_change

    art = normalise_article(article)
    return evaluate_change(session, "refresh", article=art, progress=progress,
                           redo=lambda s: refresh_line(s, art, evaluation=gate.SKIP))


def last_refresh(session, article: str) -> AuditEntry | None:  # noqa: ANN001 - Session
    """The latest refresh of ``article``'s one-liner not undone yet, or ``None``."""
    article = normalise_article(article)
    undone: set[int] = set()
    for entry in session.audit.entries(newest_first=True):
        if entry.detail.get("article") != article:
            continue
        if entry.action == A_REFRESH_UNDO:
            undone.add(int(entry.detail.get("undoes") or 0))
        elif entry.action == A_REFRESH and entry.id not in undone:
            return entry
    return None


def undo_refresh_line(session, article: str, *, client_id: str | None = None) -> dict[str, Any]:  # noqa: ANN001
    """Undo the latest :func:`refresh_line` of ``article``: put the one-liner it replaced
    back, when the line still says what the refresh wrote. Owner only.

    Raises:
        RefusedError: not the owner. GovernanceError: nothing to undo. ConflictError: the
        line was changed since the refresh.
    """
    article = normalise_article(article)
    check_owner(session, [article], "refresh the node's one-liners")
    entry = last_refresh(session, article)
    if entry is None:
        raise GovernanceError(f"no refresh of {article}'s one-liner to undo.")
    _, shown = _index_of(session, article)

    def change(tx) -> dict[str, Any]:  # noqa: ANN001 - Tx
        check_owner(session, [article], "refresh the node's one-liners")
        out = _set_one_liner(tx, article, entry.detail.get("after"), str(entry.detail.get("before") or ""))
        tx.detail["undoes"] = entry.id
        return out

    return session.write(A_REFRESH_UNDO, shown, change, client_id=client_id,
                         request={"article": article, "undoes": entry.id}).result

