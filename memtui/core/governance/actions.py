"""The governance actions: propose, use, assign, approve, reject, retire, roll back, adopt and revert (seed 000 §2 rule 7, §7.4b).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Iterable


from memtui.core import atomic
from memtui.core.errors import ConflictError, MemtuiError
from memtui.core.evalsets import is_set_path, node_of_set
from memtui.core.governance import gate
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import NODE_INDEX, Workspace
from memtui.core.governance.intents import decision_record, insert_version, transition, version_record, activation, apply_plan, merge_target, plan_files
from memtui.core.governance.model import GovernanceError, Ledger, NeedsReview, ORIGINS, RefusedError, T_ASSIGN, T_CONTESTS, T_PINS, T_USES, contest_record, Use, VERDICTS, Version, mem_path, read_or_none, sha_or_none, shown_path, node_of, normalise_article, now
from memtui.core.governance.rules import check_disk, edited_outside, eligibility, require_owner, stale_base, untracked
from memtui.core.governance.counters import EXECUTIONS


def propose(session, node: str, article: str, content: str, *, case: str, source_request: str,  # noqa: ANN001
            profile: str, profile_version: str | None = None, sources: Iterable[str] = (),
            untrusted: bool = False, title: str | None = None, one_liner: str | None = None,
            new_node_owner: str | None = None, new_node_title: str | None = None,
                new_node_line: str | None = None, intake_key: str | None = None,
            client_id: str | None = None, classification: dict[str, str] | None = None) -> Version:
    """File a proposal: a candidate version of ``node/article`` (seed 000 §2 rule 7).

    Anyone may propose into any node. The proposal is stored (state ``proposed``) and absent
    from the tree and from search; nothing under ``memory/`` is written.

    Args:
        node: the node folder relative to ``memory/`` (``support/experience``).
        article: the file name (``exp-013.md``) or a path inside the node.
        content: the complete text of the article.
        case, source_request: the proposing case and its source-request id (required).
        profile, profile_version: the authoring agent profile and its version.
        sources: URLs or paths the content was derived from.
        untrusted: the content derives from untrusted input (propagates to later versions).
        title, one_liner: the node index line (default: from the content's front matter).
        client_id: the request's id; a retry with the same id returns the version filed the
            first time instead of filing it twice (seed 004).
        classification: optional ``{"class", "reason"}`` kept with the proposal
            (:func:`memtui.core.classify.classification`).
        new_node_owner: when ``node`` has no ``AGENTS.md`` yet, the owner of the new node
            (seed 000 §2 rule 4); ``new_node_title``/``new_node_line`` its parent index line.

    Returns:
        The stored :class:`Version`.

    Raises:
        ReadOnlyError: the session is read-only. GovernanceError: bad path, empty content,
        missing case or source request, or a new node without an owner.
    """
    path, node = _proposal_path(node, article, content, case, source_request, profile)
    request = {"article": path, "sha256": atomic.sha256(content.encode("utf-8")), "case": case.strip(),
               "source_request": source_request.strip(), "profile": profile.strip(),
               "untrusted": bool(untrusted), "new_node_owner": new_node_owner}

    def change(tx) -> Version:  # noqa: ANN001 - Tx
        return _file_proposal(tx, path, content, case=case, source_request=source_request,
                              profile=profile, profile_version=profile_version, sources=sources,
                              untrusted=untrusted, title=title, one_liner=one_liner,
                              new_node_owner=new_node_owner, new_node_title=new_node_title,
                              new_node_line=new_node_line, intake_key=intake_key,
                              classification=classification)

    done = session.write("governance.propose", shown_path(session.ws, path), change, client_id=client_id,
                         request=request)
    if done.retried:  # a retry (seed 004): filed once already
        return Ledger(session.store).get(done.entry.detail["version"])
    return done.result


def propose_in(tx, node: str, article: str, content: str, *, case: str, source_request: str,  # noqa: ANN001
               profile: str, profile_version: str | None = None, sources: Iterable[str] = (),
               untrusted: bool = False, title: str | None = None, one_liner: str | None = None,
               new_node_owner: str | None = None, new_node_title: str | None = None,
               new_node_line: str | None = None, intake_key: str | None = None,
               classification: dict[str, str] | None = None) -> Version:
    """:func:`propose` as part of a larger guarded write ``tx`` (the inbox removes its file in
    the same write). Arguments and errors as for :func:`propose`."""
    path, _ = _proposal_path(node, article, content, case, source_request, profile)
    return _file_proposal(tx, path, content, case=case, source_request=source_request, profile=profile,
                          profile_version=profile_version, sources=sources, untrusted=untrusted,
                          title=title, one_liner=one_liner, new_node_owner=new_node_owner,
                          new_node_title=new_node_title, new_node_line=new_node_line,
                          intake_key=intake_key, classification=classification)


def _proposal_path(node: str, article: str, content: str, case: str, source_request: str,
                   profile: str) -> tuple[str, str]:
    """``(article path, node)`` of a proposal, after checking its required fields."""
    node = node.strip().strip("/")
    if node.startswith("memory/"):
        node = node[len("memory/"):]
    name = article.strip()
    path = normalise_article(name if "/" in name and name.startswith(node + "/") else f"{node}/{name}" if node else name)
    if not content.strip():
        raise GovernanceError("the proposed article is empty; nothing was filed.")
    if not case.strip() or not source_request.strip():
        raise GovernanceError("a proposal needs its case id and source-request id (its provenance).",
                              reference="seed 000 §7.4b")
    if not profile.strip():
        raise GovernanceError("a proposal needs the authoring --profile.")
    return path, node


def _file_proposal(tx, path: str, content: str, *, case: str, source_request: str,  # noqa: ANN001
                   profile: str, profile_version: str | None, sources: Iterable[str], untrusted: bool,
                   title: str | None, one_liner: str | None, new_node_owner: str | None,
                   new_node_title: str | None, new_node_line: str | None, intake_key: str | None,
                   classification: dict[str, str] | None = None) -> Version:
    """Store the proposal record within ``tx`` (the body of :func:`propose`)."""
    session = tx.session
    node = node_of(path)
    ledger = Ledger(session.store)
    new_node = None
    if not MemoryTree(session.ws).is_node(node_of(path)):
        if not new_node_owner:
            raise GovernanceError(
                f"{node_of(path) or 'the root'} is not a node (no AGENTS.md); a new node is created "
                "only with an owner: give --new-node-owner PROFILE", reference="seed 000 §2 rule 4")
        new_node = {"owner": new_node_owner, "title": new_node_title or PurePosixPath(node).name,
                    "one_liner": new_node_line or ""}
    prov = {"kind": "proposal", "case": case.strip(), "source_request": source_request.strip(),
            "sources": [str(s) for s in ([sources] if isinstance(sources, str) else sources) if s],
            "human_reviewed": False, "untrusted": bool(untrusted)}
    data = version_record(session.ws, ledger, path, content, author=profile.strip(),
                           profile_version=profile_version, provenance=prov, state="proposed",
                           title=title, one_liner=one_liner, new_node=new_node, intake_key=intake_key)
    if classification:
        data["classification"] = dict(classification)
    version = insert_version(session.store, data)
    tx.hashes(None, version.sha256)
    tx.detail.update({"version": version.id, "case": case, "untrusted": version.untrusted})
    return version


def use(session, version_id: str, *, case: str, source_request: str, verdict: str, check: str,  # noqa: ANN001
        origin: str = "independent", origin_of: str | None = None, hash: str | None = None,
        client_id: str | None = None, execution: str = "none") -> Use:
    """Record that ``case`` used ``version_id`` (seed 000 §7.4b MEMORY_USES), and pin it.

    A ``contradiction`` against an *active* version also marks it contested (a ``contests``
    record naming the case, seed 000 §4 step 5); it stays active.

    Args:
        verdict: ``pass`` or ``contradiction``.
        check: the independent check performed against current evidence (required: mere
            retrieval is not a use).
        origin: ``independent``, ``mirror``, ``subcase`` or ``fork``; ``origin_of`` names the
            case it derives from (required unless independent).
        hash: the article hash the case saw (default: the version's).
        client_id: the request's id; a retry with the same id returns the use recorded the
            first time instead of recording it twice (seed 004).
        execution: ``executed`` (the case executed a platform write following the version),
            ``proposed`` (it only proposed one: SQL, an owner report) or ``none``; only an
            executed write with a passing verdict is a clean execution (seed 000 §5,
            :mod:`memtui.core.governance.counters`).

    Returns:
        The stored :class:`Use`.

    Raises:
        GovernanceError: unknown version, bad verdict/origin, missing check or ids.
        ClientIdConflict: ``client_id`` was used for another request.
        ReadOnlyError: the session is read-only.
    """
    if verdict not in VERDICTS:
        raise GovernanceError(f"verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}.")
    if origin not in ORIGINS:
        raise GovernanceError(f"origin must be one of {', '.join(ORIGINS)}, not {origin!r}.")
    if origin != "independent" and not (origin_of or "").strip():
        raise GovernanceError(f"a {origin} must name the case it derives from (--origin-of CASE).")
    if not (check or "").strip():
        raise GovernanceError("a use needs the independent check performed (--check); mere retrieval "
                              "is not a use.", reference="seed 000 §7.4b")
    if not case.strip() or not source_request.strip():
        raise GovernanceError("a use needs its case id and source-request id.")
    if execution not in EXECUTIONS:
        raise GovernanceError(f"execution must be one of {', '.join(EXECUTIONS)}, not {execution!r}.")
    article = Ledger(session.store).get(version_id).article
    request = {"version": version_id, "case": case.strip(), "source_request": source_request.strip(),
               "verdict": verdict, "check": check.strip(), "origin": origin, "origin_of": origin_of,
               "hash": hash}
    if execution != "none":  # a request without it keeps the key older memtui versions recorded
        request["execution"] = execution

    def change(tx) -> Use:  # noqa: ANN001 - Tx
        version = Ledger(session.store).get(version_id)
        record = Use(version.id, hash or version.sha256, case.strip(), source_request.strip(), origin,
                     (origin_of or "").strip() or None, check.strip(), verdict, now(), session.profile,
                     execution)
        tx.table(T_USES).insert(record.to_json())
        tx.table(T_PINS).insert({"case": record.case, "version": version.id, "hash": record.hash,
                                 "time": record.time})
        tx.hashes(None, record.hash)
        tx.detail.update({"version": version.id, "case": record.case, "verdict": verdict, "origin": origin})
        if verdict == "contradiction" and version.state == "active":
            # seed 000 §4 step 5: a contradiction of active knowledge is marked, never deleted
            contest = contest_record(tx.table(T_CONTESTS), version, reason=f"case {record.case} "
                                     f"recorded a contradiction: {record.check}", case=record.case,
                                     against=None, source="use", by=session.profile)
            tx.detail["contested"] = contest.id
        return record

    done = session.write("governance.use", shown_path(session.ws, article), change, client_id=client_id,
                         request=request)
    if done.retried:
        entry = done.entry
        found = [u for u in Ledger(session.store).uses(version_id)
                 if u.case == case.strip() and u.hash == entry.after]
        return found[-1] if found else Use(version_id, entry.after or "", case.strip(), source_request.strip(),
                                           origin, origin_of, check.strip(), verdict, entry.time, entry.profile,
                                           execution)
    return done.result


def assign(session, version_id: str, cases: Iterable[str]) -> list[str]:  # noqa: ANN001
    """Assign validation cases to a proposal (seed 000 §7.4b); owner only.

    Returns:
        The cases newly assigned.

    Raises:
        RefusedError: not the owner. GovernanceError: not a proposal, no case, the proposing
        case itself, or a case assigned already.
    """
    version = Ledger(session.store).get(version_id)
    wanted = [c.strip() for c in cases if c and c.strip()]

    def change(tx) -> list[str]:  # noqa: ANN001 - Tx
        return _assign(tx, version_id, wanted)

    return session.write("governance.assign", shown_path(session.ws, version.article), change,
                         request={"version": version_id, "cases": wanted}).result or wanted


def _assign(tx, version_id: str, wanted: list[str]) -> list[str]:  # noqa: ANN001 - Tx
    session = tx.session
    ledger = Ledger(session.store)
    version = ledger.get(version_id)
    require_owner(session, version.node, "assign validation cases")
    if version.state != "proposed":
        raise GovernanceError(f"{version.id} is {version.state}; validation cases are assigned to proposals.")
    if not wanted:
        raise GovernanceError("name at least one validation case.")
    have = {a["case"] for a in ledger.assignments(version.id)}
    for c in wanted:
        if c == version.provenance.get("case"):
            raise GovernanceError(f"{c} is the proposing case; a validation case must be another case.")
        if c in have or wanted.count(c) > 1:
            raise GovernanceError(f"{c} is already assigned to {version.id}.")
    for c in wanted:
        tx.table(T_ASSIGN).insert({"version": version.id, "case": c, "by": session.profile, "time": now()})
    tx.hashes(None, version.sha256)
    tx.detail.update({"version": version.id, "cases": wanted})
    return wanted


def approve(session, version_id: str, *, reviewed: bool = False, why: str = "",  # noqa: ANN001
            replace_newer: bool = False, accept_regression: str | None = None,
            evaluation: Any = None, progress: gate.Progress | None = None) -> Version:
    """Activate a proposal: the owner's write into the shared tree (seed 000 §2 rule 7).

    Args:
        reviewed: a human reviewed it (required unless :func:`eligibility` says eligible by
            uses); recorded as ``human_reviewed`` in the decision.
        why: the decision's note.
        replace_newer: activate it even though it was filed on an older version than the one
            active now, knowingly dropping the newer change; recorded in the decision as
            ``replaced_newer`` (the id of the version it replaces). Without it such an
            approval is refused (seed 000 §7.4b: a change is a new version based on the
            active one).
        accept_regression: the reason a change that makes a domain's eval figures worse is
            made anyway (recorded with the evaluation); without it such a change is refused.
        evaluation: the :func:`evaluate_change` made beforehand (shown to the person who
            confirms); ``None`` measures here. The evaluation is kept in the new version's
            provenance (seed 000 §7.4b dependency-scoped evaluation).
        progress: told each stage of the evaluation.

    Returns:
        The now active :class:`Version`; the previous active version is retired, the article
        and its node index line (and a new node's parent line) written in one change
        (module docstring), and ``governance.activate`` recorded.

    Raises:
        RefusedError: not the owner; neither eligible by uses nor reviewed; or filed on an
            older version than the active one (or on a version since retired) without
            ``replace_newer`` (``based on @1, but @2 is active now: file the change again on @2``).
        ConflictError: the article on disk differs from its active version.
        GovernanceError: not a proposal. ReadOnlyError: read-only session.
    """
    article = Ledger(session.store).get(version_id).article

    def act(ev: Any) -> Version:
        def change(tx) -> Version:  # noqa: ANN001 - Tx
            record = gate.inside(tx, ev, accept_regression)
            return _approve(tx, version_id, reviewed=reviewed, why=why, replace_newer=replace_newer,
                            evaluation=record)

        return session.write("governance.activate", shown_path(session.ws, article), change,
                             request={"version": version_id, "reviewed": bool(reviewed),
                                      "replace_newer": bool(replace_newer)}).result

    return gate.run(session, lambda: evaluate_change(session, "approve", version_id=version_id, reviewed=reviewed,
                                                     replace_newer=replace_newer, progress=progress),
                    act, evaluation, accept_regression)


def evaluate_change(session, action: str, *, version_id: str | None = None,  # noqa: ANN001 - Session
                    article: str | None = None, to: int | None = None, reviewed: bool = False,
                    replace_newer: bool = False, progress: gate.Progress | None = None,
                    as_profile: str | None = None, redo: Any = None) -> gate.Evaluation | None:
    """Measure what a change would do to the eval sets of its domains, without making it
    (:func:`memtui.core.governance.gate.measure`): ``approve`` (``version_id``, a merge too),
    ``rollback`` (``article``, ``to``), ``retire`` (``article``) or ``refresh`` (``article``);
    ``as_profile`` makes it in the scratch copy as another profile (a preview by a reader);
    ``redo(session)`` makes a ``refresh`` in the scratch copy
    (:func:`memtui.core.consolidate.actions.evaluate_refresh` passes it).

    Returns:
        The :class:`~memtui.core.governance.gate.Evaluation`, or ``None`` when the change sits
        in no domain with an eval set.

    Raises:
        memtui.core.evalsets.EvalSetError: a cycle of ancestors, or an eval set the change
            would make unusable. Whatever the change itself would raise (not the owner …).
    """
    ledger = Ledger(session.store)
    if action == "approve":
        version = ledger.get(str(version_id))
        articles = [version.article]
        if version.merge:
            articles.append(str((version.merge or {}).get("retire") or ""))
        target = version.id

        def replay(s) -> Any:  # noqa: ANN001
            return approve(s, version.id, reviewed=reviewed, replace_newer=replace_newer, evaluation=gate.SKIP)
    else:
        art = normalise_article(str(article))
        articles, target = [art], art
        if action == "rollback":
            def replay(s) -> Any:  # noqa: ANN001
                return rollback(s, art, int(to or 0), evaluation=gate.SKIP)
        elif action == "retire":
            def replay(s) -> Any:  # noqa: ANN001
                return retire(s, art, "measured", evaluation=gate.SKIP)
        elif action == "refresh":
            if redo is None:  # the one-liner refresh lives in the consolidation pass, which imports this module
                raise ValueError("a refresh is measured with its own replay: memtui.core.consolidate.evaluate_refresh")
            replay = redo
        else:
            raise ValueError(f"no evaluation for {action!r}")
    nodes = [node_of_set(a) if is_set_path(a) else node_of(a) for a in articles if a]
    sets = tuple(node_of_set(a) for a in articles if is_set_path(a))
    return gate.measure(session, action, target, nodes, replay, progress, sets=sets, profile=as_profile)


def check_approval(session, version_id: str, *, reviewed: bool = False,  # noqa: ANN001 - Session
                   replace_newer: bool = False) -> Version:
    """Refuse an approval before anyone is asked to confirm it: the same checks
    :func:`approve` makes under the lock (owner, state, disk, base, eligibility).

    Returns:
        The proposal. Raises as :func:`approve`.
    """
    ledger = Ledger(session.store)
    version = ledger.get(version_id)
    _approval_checks(session, ledger, version, reviewed, replace_newer)
    return version


def _approval_checks(session, ledger: Ledger, version: Version, reviewed: bool,  # noqa: ANN001
                     replace_newer: bool) -> tuple[str | None, Any]:
    require_owner(session, version.node, "activate")
    if version.state != "proposed":
        raise GovernanceError(f"{version.id} is {version.state}, not a proposal; decided records are never edited.")
    if version.merge:  # it also retires another article: its owner's act too
        require_owner(session, merge_target(ledger, version).node, "retire the article this merge retires")
    check_disk(session, ledger, version)  # an edit on disk is the first thing to settle
    stale = stale_base(ledger, version)
    if stale and not replace_newer:
        raise RefusedError(f"{version.id} is {stale}; approving it would silently undo that change "
                           "(or pass --replace-newer to replace it knowingly)")
    verdict = eligibility(ledger, version)
    if verdict.by_uses and not reviewed:  # a node may require review instead of two uses
        from memtui.core.governance.promotion import required_rule

        rule, where = required_rule(session.ws, version.node)
        if rule == "review":
            raise NeedsReview(f"{version.id} is eligible by uses, but {where} requires human review to "
                              "promote (promotion: review): review the diff, then approve it as reviewed")
    if not verdict.by_uses and not reviewed:
        raise NeedsReview(f"{version.id} is not eligible by uses ({'; '.join(verdict.reasons)}); only "
                          "human review promotes it: review the diff, then approve it as reviewed")
    return stale, verdict


def _approve(tx, version_id: str, *, reviewed: bool, why: str, replace_newer: bool,  # noqa: ANN001
             evaluation: dict[str, Any] | None = None) -> Version:
    session = tx.session
    ledger = Ledger(session.store)
    version = ledger.get(version_id)
    stale, verdict = _approval_checks(session, ledger, version, reviewed, replace_newer)
    active = ledger.active(version.article)
    how = "uses" if verdict.by_uses and not reviewed else "human review"
    note = why or f"promoted by {how}"
    if reviewed and why:
        note += " (human reviewed)"
    extra: dict[str, Any] = {}
    if stale:
        replaced = active.id if active else f"{version.article} (retired)"
        note += f"; replaces the newer {replaced} (it was based on @{version.based_on}, --replace-newer)"
        extra["replaced_newer"] = replaced
    return activation(tx, ledger, version, note, "activate",
                      {"promoted_by": how, "human_reviewed": bool(reviewed),
                       "uses": [u.case for u in verdict.counted], **extra},
                      decision_extra={**extra, "human_reviewed": bool(reviewed)},
                      provenance={**({"human_reviewed": True} if reviewed else {}),
                                  **({"evaluation": evaluation} if evaluation else {})} or None)


def reject(session, version_id: str, reason: str) -> Version:  # noqa: ANN001 - Session
    """Reject a proposal with a reason (required); owner only. The record stays, decided."""
    if not (reason or "").strip():
        raise GovernanceError("rejecting needs a reason; nothing was recorded.")
    article = Ledger(session.store).get(version_id).article

    def change(tx) -> Version:  # noqa: ANN001 - Tx
        ledger = Ledger(session.store)
        version = ledger.get(version_id)
        require_owner(session, version.node, "reject proposals")
        if version.state != "proposed":
            raise GovernanceError(f"{version.id} is {version.state}, not a proposal; decided records are never edited.")
        transition(session.store, version, "rejected", "decision", decision_record(session, "reject", reason.strip()))
        tx.hashes(None, version.sha256)
        tx.detail.update({"version": version.id, "reason": reason.strip()})
        return ledger.get(version.id)

    return session.write("governance.reject", shown_path(session.ws, article), change,
                         request={"version": version_id, "reason": reason.strip()}).result


def retire(session, article: str, reason: str = "", *, accept_regression: str | None = None,  # noqa: ANN001
           evaluation: Any = None, progress: gate.Progress | None = None) -> Version:
    """Retire the active version of ``article``: its file and index line leave the tree; the
    record stays (seed 000 §7.4b). Owner only; ``reason`` (why it leaves) is required and
    recorded with the retirement.

    Raises:
        RefusedError: not the owner. GovernanceError: nothing active, or no reason given.
        ConflictError: the file differs from the active version (adopt or revert first).
        gate.RegressionRefused: it makes a domain's eval figures worse, not accepted
        (``accept_regression``, ``evaluation`` and ``progress`` as for :func:`approve`; the
        evaluation is kept in the retirement record).
    """
    article = normalise_article(article)
    reason = (reason or "").strip()
    return gate.run(session, lambda: evaluate_change(session, "retire", article=article, progress=progress),
                    lambda ev: _retire_write(session, article, reason, ev, accept_regression),
                    evaluation, accept_regression)


def _retire_write(session, article: str, reason: str, ev: Any, accept: str | None) -> Version:  # noqa: ANN001

    def change(tx) -> Version:  # noqa: ANN001 - Tx
        record = gate.inside(tx, ev, accept)
        ledger = Ledger(session.store)
        active = ledger.active(article)
        if active is None:
            raise GovernanceError(f"{article} has no active version to retire.")
        require_owner(session, active.node, "retire articles")
        if not reason:
            raise GovernanceError(f"retiring {article} needs a reason: say why it leaves the tree (it is "
                                  "recorded with the retirement); nothing was retired.")
        if sha_or_none(read_or_none(mem_path(session.ws, article))) not in (active.sha256, None):
            raise ConflictError(f"{shown_path(session.ws, article)} differs from its active version "
                                f"{active.number}; adopt or revert the unrecorded edit first.")
        apply_plan(tx, plan_files(session.ws, active, None))
        transition(session.store, active, "retired", "retirement",
                    {**decision_record(session, "retire", reason), **({"evaluation": record} if record else {})})
        tx.hashes(active.sha256, None)
        tx.detail.update({"version": active.id, "reason": reason})
        return ledger.get(active.id)

    return session.write("governance.retire", shown_path(session.ws, article), change,
                         request={"reason": reason}).result


def rollback(session, article: str, to: int, reason: str = "", *,  # noqa: ANN001
             accept_regression: str | None = None, evaluation: Any = None,
             progress: gate.Progress | None = None) -> Version:
    """Publish a new version holding version ``to``'s content (seed 000 §7.4b); owner only.

    ``to`` must have been accepted once (active or retired, not a proposal or a rejection).
    The new version's provenance names the rollback (``kind: rollback``, ``rollback_of``) and
    keeps ``to``'s untrusted mark; nothing earlier is edited.

    Raises:
        RefusedError: not the owner. GovernanceError: no such accepted version, or it is the
        active content already. ConflictError: unrecorded edit on disk.
    """
    article = normalise_article(article)

    def act(ev: Any) -> Version:
        def change(tx) -> Version:  # noqa: ANN001 - Tx
            return _rollback(tx, article, to, reason, gate.inside(tx, ev, accept_regression))

        return session.write("governance.rollback", shown_path(session.ws, article), change,
                             request={"to": to, "reason": reason}).result

    return gate.run(session, lambda: evaluate_change(session, "rollback", article=article, to=to, progress=progress),
                    act, evaluation, accept_regression)


def check_rollback(session, article: str, to: int) -> Version:  # noqa: ANN001 - Session
    """Refuse a rollback before anyone is asked to confirm it: the checks :func:`rollback`
    makes under the lock.

    Returns:
        The version whose content the rollback would publish again.

    Raises:
        GovernanceError: no such accepted version, or the active version holds its content
        already. RefusedError: not the owner.
    """
    article = normalise_article(article)
    ledger = Ledger(session.store)
    target = next((v for v in ledger.versions(article) if v.number == to), None)
    if target is None or target.decision is None or target.state not in ("active", "retired"):
        raise GovernanceError(f"{article} has no accepted version {to} to roll back to; "
                              f"`memtui versions {article}` lists them.")
    require_owner(session, target.node, "roll back")
    active = ledger.active(article)
    if active is not None and active.sha256 == target.sha256:
        if active.number == to:
            raise GovernanceError(f"version {to} of {article} is the active version: roll back to an "
                                  "earlier version.")
        raise GovernanceError(f"the active version {active.number} of {article} already holds the content of "
                              f"version {to}: nothing would change.")
    return target


def _rollback(tx, article: str, to: int, reason: str,  # noqa: ANN001 - Tx
              evaluation: dict[str, Any] | None = None) -> Version:
    session = tx.session
    ledger = Ledger(session.store)
    target = check_rollback(session, article, to)
    prov = {"kind": "rollback", "rollback_of": to, "case": None, "source_request": None,
            "sources": list(target.provenance.get("sources") or []),
            "human_reviewed": True, "untrusted": target.untrusted}
    data = version_record(session.ws, ledger, article, target.content, author=session.profile,
                           profile_version=None, provenance=prov, state="proposed",
                           title=target.title, one_liner=target.one_liner)
    data["provenance"]["untrusted"] = target.untrusted  # the restored content's own chain
    version = insert_version(session.store, data)
    return activation(tx, ledger, version, reason or f"rollback to version {to}", "rollback",
                      {"rollback_of": to}, provenance={"evaluation": evaluation} if evaluation else None)


def adopt(session, path: str | None = None, reason: str = "") -> list[Version]:  # noqa: ANN001
    """Record articles explicitly (never done by opening a workspace).

    An untracked article becomes version 1 (``active``, provenance ``baseline``); anyone may
    adopt a baseline, since it publishes nothing new. An article with an unrecorded edit
    becomes a new active version (provenance ``external edit``, untrusted when the chain is);
    that is an activation, so only the owner may do it. ``path`` is an article or a node
    folder (memory-relative); ``None`` means the whole tree.

    Returns:
        The versions recorded (empty when nothing needed adopting).

    Raises:
        RefusedError: an external edit in a node the acting profile does not own.
        GovernanceError: ``path`` is neither an article nor a folder of the tree.
    """
    ws = session.ws
    ledger = Ledger(session.store)
    target = (path or "").strip().strip("/")
    if target.startswith("memory/"):
        target = target[len("memory/"):]
    if target.endswith(".md") or is_set_path(target):
        target = normalise_article(target)
        if not mem_path(ws, target).is_file():
            raise GovernanceError(f"{shown_path(ws, target)} is not a file of the tree.")
        candidates = [target]
    else:
        if target and not mem_path(ws, target).is_dir():
            raise GovernanceError(f"{target!r} is neither an article nor a folder of the memory tree.")
        candidates = untracked(ws, session.store, target or None)
        candidates += [a for a, vs in ledger.tracked().items()
                       if (not target or a.startswith(target + "/")) and edited_outside(ws, ledger, a)]
    out: list[Version] = []
    for article in candidates:  # one guarded write an article
        done = session.write("governance.adopt", shown_path(ws, article),
                             lambda tx, article=article: _adopt_one(tx, article, reason),
                             request={"reason": reason})
        if done.result is not None:
            out.append(done.result)
    return out


def _adopt_one(tx, article: str, reason: str) -> Version | None:  # noqa: ANN001 - Tx
    """Record one article (the body of :func:`adopt`); ``None`` when nothing needs adopting."""
    session, ws = tx.session, tx.session.ws
    ledger = Ledger(session.store)
    data = read_or_none(mem_path(ws, article))
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    active = ledger.active(article)
    if active is None:
        record = version_record(ws, ledger, article, text, author=session.profile, profile_version=None,
                                 provenance={"kind": "baseline", "human_reviewed": False},
                                 state="active", decision=decision_record(session, "adopt", reason or "baseline"))
        version = insert_version(session.store, record)
        tx.hashes(None, version.sha256)
        tx.detail.update({"version": version.id, "provenance": "baseline"})
        return version
    if active.sha256 == atomic.sha256(data):
        return None
    require_owner(session, active.node, "adopt an external edit")
    record = version_record(ws, ledger, article, text, author=session.profile, profile_version=None,
                             provenance={"kind": "external edit", "human_reviewed": False},
                             state="proposed")
    version = insert_version(session.store, record)
    # the file already holds the bytes: only the index line is written if it needs to change
    files = plan_files(ws, version, version.content)
    apply_plan(tx, [f for f in files if f["path"] != shown_path(ws, article)])
    transition(session.store, active, "retired", "retirement",
                {**decision_record(session, "retire", f"superseded by external edit, version {version.number}"),
                 "superseded_by": version.id})
    transition(session.store, ledger.get(version.id), "active", "decision",
                decision_record(session, "adopt", reason or "external edit"))
    tx.hashes(active.sha256, version.sha256)
    tx.detail.update({"version": version.id, "provenance": "external edit", "retired": active.id})
    return ledger.get(version.id)


def revert(session, article: str) -> Version:  # noqa: ANN001 - Session
    """Put the active version's bytes back over an unrecorded edit (owner only).

    Raises:
        RefusedError: not the owner. GovernanceError: no active version or nothing to revert.
    """
    article = normalise_article(article)

    def change(tx) -> Version:  # noqa: ANN001 - Tx
        active = Ledger(session.store).active(article)
        if active is None:
            raise GovernanceError(f"{article} has no active version to revert to.")
        require_owner(session, active.node, "revert articles")
        shown = shown_path(session.ws, article)
        current = tx.sha(shown)
        if current == active.sha256:
            raise GovernanceError(f"{shown} already holds its active version {active.number}.")
        tx.replace(shown, active.content.encode("utf-8"), base=current)
        tx.detail["version"] = active.id
        return active

    return session.write("governance.revert", shown_path(session.ws, article), change).result


def touched_paths(ws: Workspace, article: str) -> list[str]:
    """Workspace-relative files an action on ``article`` may have written: the article, its
    node index and the parent node's index (for :func:`refresh_search`)."""
    tree = MemoryTree(ws)
    node = node_of(article)
    out = [shown_path(ws, article), shown_path(ws, f"{node}/{NODE_INDEX}" if node else NODE_INDEX)]
    parent = tree.parent_node(node) if node else None
    if parent is not None:
        out.append(shown_path(ws, f"{parent}/{NODE_INDEX}" if parent else NODE_INDEX))
    return out


def refresh_search(ws: Workspace, paths: list[str]) -> str | None:
    """Make saved files searchable (``SearchIndex.update(only=paths)``) when a search index
    exists; the index is derived data, so a failure is returned as a sentence, not raised."""
    from memtui.core.search.index import SearchIndex

    index = SearchIndex(ws)
    if not index.exists():
        return None
    try:
        index.update(only=paths)
    except MemtuiError as exc:
        return f"the search index was not updated ({exc}); run `memtui index`"
    return None
