"""The proposals inbox: files agents and scripts drop into ``proposals/inbox/``, ingested as proposals.
"""

from __future__ import annotations

from typing import Any


from memtui.core import atomic, frontmatter
from memtui.core.errors import ConfinementError
from memtui.core.files import confine
from memtui.core.findings import Finding
from memtui.core.governance.actions import propose_in
from memtui.core.governance.model import GovernanceError, Ledger, Version


#: Where agents and scripts drop proposals for :func:`ingest` (workspace-relative).
INBOX = "proposals/inbox"


def ingest(session, folder: str = INBOX) -> tuple[list[Version], list[Finding]]:  # noqa: ANN001
    """File every ``*.md`` in the inbox as a proposal, then remove the file.

    An inbox file's front matter carries the :func:`propose` fields (``node``, ``article``,
    ``case``, ``source_request``, ``profile``, ``profile_version``, ``sources``,
    ``untrusted``, ``new_node_owner``…: :data:`INBOX_FIELDS`); the article stored is the file
    minus those governance keys (:func:`article_from_inbox`), so ``title``, ``summary``,
    ``tags`` and other article metadata stay in its front matter.
    Each file is one guarded write (:meth:`memtui.core.session.Session.write`): its proposal
    is stored and the file removed together, and a proposal stored from the same bytes (its
    ``intake_key``) is not stored twice, so an ingest cut short loses nothing and doubles
    nothing.

    Returns:
        ``(proposals stored now, findings for files left in the inbox)``.
    """
    session.require_writable()
    ledger = Ledger(session.store)
    ws = session.ws
    try:
        inbox = confine(ws.root, folder)
    except ConfinementError as exc:
        raise GovernanceError(str(exc)) from exc
    if not inbox.is_dir():
        return [], []
    stored: list[Version] = []
    findings: list[Finding] = []
    known = {v.intake_key for v in ledger.versions() if v.intake_key}
    for file in sorted(inbox.glob("*.md")):
        shown = ws.shown(file)
        data = file.read_bytes()
        key = atomic.sha256(file.name.encode("utf-8") + b"\0" + data)
        if key in known:  # stored by an ingest cut short before it removed the file
            session.write("governance.ingest", shown,
                          lambda tx, shown=shown, data=data: tx.replace(shown, None, base=atomic.sha256(data)))
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            findings.append(Finding.make("proposal-inbox-invalid", shown, "is not UTF-8 text", "re-save it as UTF-8"))
            continue
        fm = frontmatter.split(text)
        meta = fm.meta if isinstance(fm.meta, dict) else {}
        missing = [k for k in ("node", "article", "case", "source_request", "profile") if not meta.get(k)]
        if fm.error or missing:
            findings.append(Finding.make(
                "proposal-inbox-invalid", shown,
                fm.error or f"the front matter misses {', '.join(missing)}",
                "give node, article, case, source_request and profile in the front matter"))
            continue
        sources = meta.get("sources") or []

        def change(tx, meta=meta, fm=fm, key=key, shown=shown, data=data, sources=sources) -> Version:  # noqa: ANN001
            version = propose_in(
                tx, str(meta["node"]), str(meta["article"]), article_from_inbox(fm),
                case=str(meta["case"]), source_request=str(meta["source_request"]),
                profile=str(meta["profile"]), profile_version=_opt(meta.get("profile_version")),
                sources=[str(s) for s in (sources if isinstance(sources, list) else [sources])],
                untrusted=bool(meta.get("untrusted")), title=_opt(meta.get("title")),
                one_liner=_opt(meta.get("summary")), new_node_owner=_opt(meta.get("new_node_owner")),
                intake_key=key)
            tx.replace(shown, None, base=atomic.sha256(data))  # the file goes with its proposal stored
            return version

        try:
            version = session.write("governance.propose", shown, change,
                                    client_id=_opt(meta.get("client_id")), request={"intake_key": key}).result
        except GovernanceError as exc:
            findings.append(Finding.make("proposal-inbox-invalid", shown, str(exc), "fix the file and ingest again"))
            continue
        if version is not None:
            stored.append(version)
        known.add(key)
    return stored, findings


#: Inbox front-matter keys that are governance (provenance, routing), not article metadata;
#: :func:`ingest` removes them from the stored article and keeps every other key.
INBOX_FIELDS = ("node", "article", "case", "source_request", "profile", "profile_version", "sources",
                "untrusted", "new_node_owner", "new_node_title", "new_node_line", "client_id")


def article_from_inbox(fm: frontmatter.FrontMatter) -> str:
    """The article text of an inbox file: its front matter without the :data:`INBOX_FIELDS`
    keys (and their indented or list continuation lines), every other key kept as written
    (``title``, ``summary``, ``tags``…), then the body. No front matter is left when only
    governance keys were given. Line ends follow the file (CRLF kept)."""
    kept: list[str] = []
    dropping = False
    for line in fm.raw.splitlines(keepends=True):
        top = line[:1] not in (" ", "\t", "-", "#", "\n", "") or line.startswith("---")
        if top:
            key = line.split(":", 1)[0].strip().strip("'\"")
            dropping = key in INBOX_FIELDS
        if not dropping:
            kept.append(line)
    block = "".join(kept)
    body = fm.body.lstrip("\r\n") if not block.strip() else fm.body
    if not block.strip():
        return body
    if not block.endswith("\n"):
        block += "\n"
    eol = "\r\n" if fm.crlf else "\n"
    block = block.replace("\n", eol)
    return f"---{eol}{block}---{eol}{body}"


def _opt(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
