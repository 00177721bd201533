"""What an article of the memory tree must look like beyond its syntax.

- **Experience entries** (seed 000 §5): an article in an ``experience`` node carries the
  past-case entry shape in its front matter — ``symptom`` (verbatim), ``systems``,
  ``environment``, ``mechanism`` (one sentence), ``fix_shape`` (one of :data:`FIX_SHAPES`),
  ``links`` and ``artifacts``; its ``links`` resolve.
- **Saga entries** (seed 000 §7.3): an experience entry about one business object across
  several tickets (front matter ``saga``, ``object`` or ``object_hash``) carries the keyed hash
  of the object number, never a person key: a field named for a person (:data:`PERSON_KEYS`)
  or personal data in its front matter is a finding.
- **Guide, not diary** (seed 000 §2 rule 2): an article body states the running system in the
  present tense; dates and session references belong in metadata. A note, never a blocker.
- **Links resolve** (seed 000 §1 "every seed is a fact with a link"): a relative link to a
  missing file, or to a ``#anchor`` that names no heading of its target.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Any, Iterable

from memtui.core.findings import Finding
from memtui.core.scan.chunk import HINTS, Chunk, literal
from memtui.core.tree.index import HEADING, iter_anchored_links

#: The fields of the past-case entry shape (seed 000 §5), as front matter keys.
EXPERIENCE_FIELDS = ("symptom", "systems", "environment", "mechanism", "fix_shape", "links", "artifacts")
#: seed 000 §5: "fix shape (data fix / config cell / code / answer)".
FIX_SHAPES = ("data fix", "config cell", "code", "answer")
#: Front matter keys that hold a person's identity (seed 000 §7.3, D44: "never a person key").
PERSON_KEYS = frozenset({"person", "person_key", "person_id", "customer", "customer_id", "client", "client_id",
                         "egn", "personal_number", "holder", "recipient", "sender_name", "email", "phone"})
#: Front matter keys that make an experience entry a saga entry (one business object).
SAGA_KEYS = ("saga", "object", "object_hash")

_DATE = re.compile(r"(?<![\w-])(?:\d{4}-\d{2}-\d{2}|\d{1,2}\.\d{1,2}\.\d{4})(?![\w-])")
#: What every date of :data:`_DATE` holds (its middle part): found 5x faster than a date, so a
#: date is looked for only around it.
_DATE_HINT = re.compile(r"[-.]\d\d?[-.]")


def _date_in(text: str) -> "re.Match[str] | None":
    """The first :data:`_DATE` in ``text``, looked for only around the hints."""
    for hint in _DATE_HINT.finditer(text):
        found = _DATE.search(text, max(0, hint.start() - 5), hint.end() + 5)
        if found:
            return found
    return None
#: A reference to a session history (seed 002's ``sessions/durable/<key>.jsonl``); words such
#: as "session" alone are domain words (a login session) and are not taken for one.
_SESSION = re.compile(r"\bsessions/durable/[\w.-]+")
_FENCE = re.compile(r"^\s*(```|~~~)")


def is_experience(node: str) -> bool:
    """True when ``node`` (memory-relative) is an ``experience`` node (seed 000 §1, §5)."""
    return node.rsplit("/", 1)[-1] == "experience"


def _fix_shape(value: Any) -> str | None:
    return " ".join(str(value).replace("_", " ").replace("-", " ").lower().split()) if value is not None else None


def experience_findings(meta: dict[str, Any], shown: str, folder: str, root: str) -> list[Finding]:
    """Findings of one experience entry's shape (seed 000 §5, §7.3).

    Args:
        meta: its front matter.
        shown: its workspace-relative path.
        folder: its absolute folder (links are relative to it).
        root: the workspace folder (links leaving it are another check's).
    """
    out: list[Finding] = []
    missing = [f for f in EXPERIENCE_FIELDS if f not in meta or meta.get(f) in (None, "")]
    if missing:
        out.append(Finding.make(
            "experience-field-missing", shown,
            f"the experience entry has no {', '.join(missing)}",
            "add the missing front matter fields: symptom (customer phrase + system error, verbatim), "
            "systems, environment, mechanism (one sentence), fix_shape, links, artifacts", line=1))
    shape = _fix_shape(meta.get("fix_shape"))
    if shape is not None and shape not in FIX_SHAPES:
        out.append(Finding.make(
            "experience-fix-shape", shown, f"fix_shape {meta.get('fix_shape')!r} is not one of {', '.join(FIX_SHAPES)}",
            f"set fix_shape to one of: {', '.join(FIX_SHAPES)}", line=1))
    links = meta.get("links")
    for target in links if isinstance(links, list) else []:
        if not isinstance(target, str) or "://" in target or target.startswith(("mailto:", "#")):
            continue
        path = target.split("#", 1)[0]
        candidate = os.path.normpath(os.path.join(folder, path))
        if not (candidate == root or candidate.startswith(root + os.sep)):
            continue
        if path and not os.path.exists(candidate):
            out.append(Finding.make(
                "link-broken", shown, f"links: entry {target!r} points at a file that does not exist",
                "fix the path (relative to the entry's folder) or remove the entry", line=1))
    if any(key in meta for key in SAGA_KEYS):
        out.extend(_saga_findings(meta, shown))
    return out


def _saga_findings(meta: dict[str, Any], shown: str) -> list[Finding]:
    from memtui.core.scan import personal

    out: list[Finding] = []
    for key, value in meta.items():
        if str(key).lower() in PERSON_KEYS and value not in (None, "", []):
            out.append(Finding.make(
                "saga-person-key", shown,
                f"the saga entry carries a person key in {key!r}; a saga entry names its object by a "
                "keyed hash, never a person",
                "remove the field; name the business object by `object_hash:` (a keyed hash of its number)",
                line=1))
    for key in EXPERIENCE_FIELDS + SAGA_KEYS:
        value = meta.get(key)
        texts = value if isinstance(value, list) else [value]
        for text in texts:
            if isinstance(text, str) and personal.find(text):
                out.append(Finding.make(
                    "saga-person-key", shown,
                    f"the saga entry's {key!r} holds personal data (a person key)",
                    "replace it by the keyed hash of the business object's number", line=1))
                break
    return out


def diary_findings(body: str, shown: str, body_line: int) -> list[Finding]:
    """One ``article-diary`` note when ``body`` holds a calendar date or a session reference
    outside code (seed 000 §2 rule 2: "no dates/sessions/incidents in bodies — provenance in
    metadata"), at the first such line."""
    if not (_date_in(body) or ("sessions/durable/" in body and _SESSION.search(body))):
        return []
    in_fence = False
    for offset, line in enumerate(body.split("\n")):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        plain = re.sub(r"`[^`]*`", "", line)
        found = _date_in(plain) or _SESSION.search(plain)
        if found:
            what = "a date" if found.re is _DATE else "a session reference"
            return [Finding.make(
                "article-diary", shown, f"the body holds {what} ({found.group(0)!r}): write the rule, not the incident",
                "state the pattern in the present tense; move dates and the case or session into front matter "
                "(provenance), or replace a value by the query that regenerates it",
                line=body_line + offset)]
    return []


#: The name of the diary's hints in :data:`memtui.core.scan.chunk.HINTS`: what every
#: :data:`_DATE` of an ASCII text holds, and a session reference (:data:`_SESSION`).
HINTS_NAME = "diary"
HINTS.add(HINTS_NAME, [b"[0-9]{4}-[0-9]{2}-[0-9]{2}", b"[0-9]{1,2}\\.[0-9]{1,2}\\.[0-9]{4}",
                       literal("sessions/durable/")])


def diary_candidates(chunk: Chunk, bodies: dict[int, int]) -> set[int]:
    """The texts of ``chunk`` whose body may hold what :func:`diary_findings` reports; for
    every other text it returns ``[]``.

    Args:
        chunk: the texts (whole files).
        bodies: text index → character offset of its body in the text, for the texts asked about.

    Returns:
        The indexes (of ``bodies``) holding a date or ``sessions/durable/`` in the body; a
        text with non-ASCII characters always (``\\d`` matches every script's digits).
    """
    out = {i for i in bodies if not chunk.ascii[i]}
    starts = chunk.starts
    for _, end in chunk.hints(HINTS_NAME):  # a hint never spans the line where a body starts
        index = chunk.owner(end - 1)
        if index in bodies and end - 1 - starts[index] >= bodies[index]:
            out.add(index)
    return out


def slug(heading: str) -> str:
    """The anchor a Markdown renderer gives ``heading`` (GitHub's rule: lower case, punctuation
    dropped, spaces to hyphens)."""
    text = unicodedata.normalize("NFC", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor ``text`` defines: heading slugs (with ``-1``, ``-2`` for repeats) and
    explicit ``id``/``name`` attributes and ``{#id}`` markers."""
    out: set[str] = set()
    counts: dict[str, int] = {}
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = HEADING.match(line)
        if match:
            base = slug(re.sub(r"\{#[^}]*\}", "", match.group(1)))
            n = counts.get(base, 0)
            out.add(base if n == 0 else f"{base}-{n}")
            counts[base] = n + 1
        if "id=" in line or "name=" in line or "{#" in line:
            out.update(re.findall(r"""(?:id|name)=["']([^"']+)["']""", line))
            out.update(re.findall(r"\{#([^}\s]+)\}", line))
    return out


def collect_links(text: str, first_line: int, raw: list[tuple[int, str]] | None = None) -> list[list[Any]]:
    """The relative links of ``text`` as ``[line, target, anchor]`` (target ``""`` for a link
    to an anchor of the same text): what the article cache keeps, so links are resolved on
    every audit (another file may have gone) without reading the article again. ``raw``:
    :func:`memtui.core.tree.index.raw_links` of ``text``, when the caller has them."""
    if (not raw) if raw is not None else "](" not in text:
        return []
    return [[first_line + offset, target, anchor] for offset, target, anchor in iter_anchored_links(text, raw)
            if not target.startswith("/")]


def own_anchor_findings(text: str, links: list[list[Any]], shown: str) -> list[Finding]:
    """``anchor-broken`` for links to ``#anchor`` of the same text that names no heading of it."""
    wanted = [link for link in links if not link[1] and link[2]]
    if not wanted:
        return []
    from urllib.parse import unquote

    known = anchors(text)
    return [_anchor_finding(shown, link) for link in wanted
            if link[2].lower() not in known and unquote(link[2]).lower() not in known]


def _anchor_finding(shown: str, link: list[Any]) -> Finding:
    target = f"{link[1]}#{link[2]}"
    return Finding.make("anchor-broken", shown, f"the link {target!r} names an anchor its target does not have",
                        "link to an existing heading (its anchor is the heading in lower case, spaces as "
                        "hyphens) or drop the #part", line=link[0])


def resolve_links(links: list[list[Any]], file: str, shown: str, root: str,
                  anchor_cache: dict[str, set[str] | None]) -> Iterable[Finding]:
    """``link-broken`` / ``anchor-broken`` for ``links`` (from :func:`collect_links`) of the
    file at absolute ``file`` whose targets stay inside the workspace ``root`` (leaving it is
    ``link-outside``'s) and are not found.

    Args:
        anchor_cache: absolute path → anchors of that file (``None`` when unreadable), shared
            across one audit so a target is read once.
    """
    from urllib.parse import unquote

    folder = os.path.dirname(file)
    for line, target, anchor in links:
        if not target:
            continue
        candidate = os.path.normpath(os.path.join(folder, target))
        if not (candidate == root or candidate.startswith(root + os.sep)):
            continue
        if not os.path.exists(candidate):
            decoded = os.path.normpath(os.path.join(folder, unquote(target)))
            if not os.path.exists(decoded):
                yield Finding.make("link-broken", shown, f"the link {target!r} points at a file that does not exist",
                                   "fix the link or remove it", line=line)
                continue
            candidate = decoded
        if not anchor or not candidate.lower().endswith(".md") or os.path.isdir(candidate):
            continue
        if candidate not in anchor_cache:
            try:
                with open(candidate, encoding="utf-8", errors="replace") as handle:
                    anchor_cache[candidate] = anchors(handle.read(2_000_000))
            except OSError:
                anchor_cache[candidate] = None
        known = anchor_cache[candidate]
        if known is not None and anchor.lower() not in known and unquote(anchor).lower() not in known:
            yield _anchor_finding(shown, [line, target, anchor])
