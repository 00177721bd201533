"""Secrets and personal data in the texts memtui reads.

- :mod:`memtui.core.scan.secrets`: detect-secrets behind one door; values are masked.
- :mod:`memtui.core.scan.personal`: e-mail, phone, ЕГН, IBAN and card numbers (checksums).
- :mod:`memtui.core.scan.allow`: false positives the operator allowed (``memtui audit allow``).
- :mod:`memtui.core.scan.workspace`: the audit contributor for the texts outside the memory
  tree's articles (notes, notebook, operator files, skills, graph, session histories, store).

The functions here turn hits into findings; a finding names the place and the masked value,
never the value (seed 000 §2 rule 5; DESIGN.md §4 invariant 8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from memtui.core.findings import Finding

if TYPE_CHECKING:
    from memtui.core.scan import personal, secrets
    from memtui.core.scan.chunk import Chunk

#: The codes whose findings carry a value fingerprint and may be allowed as false positives.
ALLOWABLE = frozenset({"secret", "pii-email", "pii-phone", "pii-egn", "pii-iban", "pii-card"})


#: What decides the scans' results besides the text: memtui's rule modules and lists, and the
#: versions of the detector libraries they run on (:func:`rules_fingerprint`).
_RULE_FILES = ("secrets.py", "personal.py", "rules.py", "gitleaks_rules.py", "chunk.py", "factors.py",
               "placeholders.txt")
_RULE_LIBRARIES = ("detect-secrets", "phonenumberslite", "python-stdnum", "hyperscan")


def rules_fingerprint() -> str:
    """A hash of the rule set the secrets and personal-data scans apply (the files of
    :data:`_RULE_FILES` and the versions of :data:`_RULE_LIBRARIES`): a cache of scan results
    keyed by content is valid only under the same fingerprint. Read once per process."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        import hashlib
        from importlib import metadata
        from pathlib import Path

        digest = hashlib.sha256()
        here = Path(__file__).resolve().parent
        for name in _RULE_FILES:
            try:
                digest.update(name.encode() + b"\0" + (here / name).read_bytes() + b"\0")
            except OSError:
                digest.update(name.encode() + b"\0missing\0")
        for library in _RULE_LIBRARIES:
            try:
                version = metadata.version(library)
            except metadata.PackageNotFoundError:
                version = "absent"
            digest.update(f"{library}={version}\0".encode())
        _FINGERPRINT = digest.hexdigest()[:16]
    return _FINGERPRINT


_FINGERPRINT: str | None = None


def prepare() -> None:
    """Load and configure the detectors now (about 0.2 s: detect-secrets' plugins, the
    prefilters' Hyperscan databases, libphonenumber's metadata), so worker processes forked
    afterwards share them instead of each doing it again."""
    from memtui.core.scan import personal, secrets
    from memtui.core.scan.chunk import HINTS

    secrets.find("x")
    personal.find("0 0000 000 000")
    HINTS.compiled()  # with every hint contributed so far (the tree's too, once imported)


def secret_findings(text: str, shown: str, first_line: int = 1) -> list[Finding]:
    """``secret`` findings (errors) for every value detect-secrets flags in ``text``.

    Args:
        text: the text as read.
        shown: its workspace-relative path (the finding's place).
        first_line: the file line of ``text``'s first line.
    """
    from memtui.core.scan import secrets

    return [_secret_finding(hit, shown) for hit in secrets.find(text, first_line)]


def personal_findings(text: str, shown: str, first_line: int = 1) -> list[Finding]:
    """``pii-*`` findings (warnings) for the personal data in ``text`` (seed 000 §5)."""
    from memtui.core.scan import personal

    return [_personal_finding(hit, shown) for hit in personal.find(text, first_line)]


def findings_many(texts: Sequence[str], shown: Sequence[str], chunk: "Chunk | None" = None) -> list[list[Finding]]:
    """:func:`secret_findings` then :func:`personal_findings` of each text (``shown[i]`` is
    the place of ``texts[i]``), both scans over one :class:`~memtui.core.scan.chunk.Chunk`:
    the same findings, their prefilters run once over all the texts (``chunk``: of ``texts``,
    to share it with other scans)."""
    from memtui.core.scan import personal, secrets
    from memtui.core.scan.chunk import Chunk

    if not texts:
        return []
    chunk = chunk if chunk is not None else Chunk(texts)
    found = secrets.find_many(texts, chunk=chunk)
    pii = personal.find_many(texts, chunk=chunk)
    return [[_secret_finding(hit, place) for hit in hits] + [_personal_finding(hit, place) for hit in data]
            for place, hits, data in zip(shown, found, pii, strict=True)]


def _secret_finding(hit: "secrets.Hit", shown: str) -> Finding:
    return Finding.make(
        "secret", shown, f"holds what looks like a secret ({hit.kind}: {hit.masked})",
        "remove it from the file and revoke it where it was issued; if it is no secret, "
        f"`memtui audit allow secret {shown}:{hit.line} --reason …`",
        line=hit.line, column=hit.column, fingerprint=hit.fingerprint)


def _personal_finding(hit: "personal.Personal", shown: str) -> Finding:
    return Finding.make(
        hit.code, shown, f"holds {hit.kind} ({hit.masked}); the memory tree holds no personal data",
        "write the pattern without the person: replace the value by what it is (\"the sender's "
        f"phone\") or a keyed hash; if it is no one's, `memtui audit allow {hit.code} {shown}:{hit.line} "
        "--reason …`", line=hit.line, column=hit.column, fingerprint=hit.fingerprint)
