"""An inherited v1 memory corpus, generated: a flat folder of a few hundred Markdown files with
a one-line-per-file ``MEMORY.md``, in English and Bulgarian, holding the v1 failure modes the
migration must handle (disciplines stored as articles, dated diaries, personal data,
duplicates, tool quirks and session workarounds, index lines pointing at missing files), and
a workspace with two domains to migrate into, each with held-out triage cases:

- ``support/parcels-lost`` is built to pass the gate: its held-out tickets are written in
  Bulgarian, the v1 one-liners in English, and the v1 bodies carry the customers' Bulgarian
  phrases — grep over one-liners misses, a search over the migrated bodies finds them;
- ``support/cod-payments`` is built to fail: its held-out tickets' precedents are v1
  session workarounds, which the migration drops (seed 000 §7.5), while grep finds them by
  their one-liners.

:func:`build` writes both and returns what a test needs to know about them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

PASS_DOMAIN = "support/parcels-lost"
FAIL_DOMAIN = "support/cod-payments"

# (stem, title, one-liner, body) of the parcels-lost domain's v1 files
_LOST = [
    ("lost-scan-gap", "Scan gap on a lost parcel",
     "What a missing next scan means and when to open a depot search",
     "A parcel looks lost when tracking has not moved. The last scan is known and the next expected "
     "scan is missing. Customers write: „пратката не е сканирана от дни“, „пратката ми стои на едно място“, "
     "„няма движение по товарителницата“. Read the last three DepotScan events; a gap longer than twice the "
     "normal one opens the depot search."),
    ("depot-search", "Depot search for a missing parcel",
     "The 48-hour depot search and who signs a lost-parcel claim",
     "The depot searches the exception cage and the sorting line for 48 hours. Customers ask: „изгубена ли е "
     "пратката“, „искам да подам рекламация за изгубена пратка“. A claim for a lost parcel is signed by a "
     "human lead, never by the agent."),
    ("address-geocoding", "Wrong depot after geocoding",
     "Parcels routed to a village of the same name",
     "RouteCore geocodes the address; two villages with the same name send the parcel to the wrong depot. "
     "Customers say: „пратката отиде в друго село“, „доставката е в грешен град“. Check the geocoded depot "
     "against the postcode."),
    ("handheld-offline", "Handheld scans waiting offline",
     "Scans queued on a courier handheld that has no signal",
     "A handheld without signal keeps its scans in a queue; tracking shows nothing until it syncs. "
     "Customers: „куриерът каза че е доставена но не се вижда“. Ask the depot to sync the handheld."),
    ("return-to-sender", "Return to sender is not lost",
     "An RTS scan means the parcel is going back, not lost",
     "A parcel with an RTS event is returning to the sender. Customers write: „пратката се връща обратно“, "
     "„защо пратката тръгна към подателя“. Explain the return reason from the waybill."),
]
# a discipline stored as an article (a mechanic)
_LOST_CHECKLIST = ("lost-parcel-checklist", "Lost parcel checklist", "Steps before calling a parcel lost",
                   "Always do these before calling a parcel lost:\n\n1. Always read the last three scans.\n"
                   "2. Always check the handheld queue of the last depot.\n3. Never open a claim before the "
                   "depot search.\n4. Always check for RTS and redirects.\n")
# a dated diary of one incident (an experience entry)
_LOST_DIARY = ("2026-05-20-lost-parcel-plovdiv", "Lost parcel in Plovdiv, 20.05.2026",
               "Diary: the parcel that sat in the Plovdiv cage",
               "On 20.05.2026 a customer wrote that the parcel had not moved for four days. Ticket 4411. "
               "We found it in the Plovdiv exception cage after the depot search. Клиентът се обади два пъти.")
# personal data (an email and a phone number) in a lost-parcel note
_LOST_PII = ("lost-parcel-recipient-note", "Lost parcel recipient callback",
             "Calling the recipient back about a lost parcel",
             "When a lost parcel is found, call the recipient back. Example: Maria Ivanova, "
             "maria.ivanova@example.com, +359 88 123 4567, wanted the parcel at her office.")
# a near-duplicate of lost-scan-gap
_LOST_DUP = ("lost-scan-gap-copy", "Scan gap on a lost parcel (copy)",
             "What a missing next scan means and when to open a depot search",
             _LOST[0][3])
# a v1 tool quirk inside the lost-parcel vocabulary (dropped, §7.5)
_LOST_QUIRK = ("depotscan-cli-quirk", "DepotScan CLI quirk",
               "The DepotScan tool call hangs on a lost parcel query; reconnect",
               "Workaround: the DepotScan tool call hangs when a lost parcel query has no scans; restart the "
               "session and reconnect the MCP server.")

# the cod-payments domain: its precedents are v1 session workarounds (dropped)
_COD = [
    ("cod-payout-session-workaround", "COD payout missing: session workaround",
     "COD payout missing from the bank account: restart the BillingHub session and query the payout file again",
     "Workaround for the BillingHub tool: when a COD payout is missing, the session expired. Restart the "
     "session, reconnect and query the payout file again."),
    ("cod-settled-quirk", "SETTLED status quirk of the billing tool",
     "COD shows SETTLED but the transfer is missing: the tool call caches the status",
     "Quirk of the billing tool call: SETTLED is cached for the session. Re-login to the tool and ask "
     "for the transfer again."),
    ("cod-amount-mcp", "COD amount differs: MCP rounding quirk",
     "COD amount differs from the collected cash: the MCP server rounds the amount",
     "The MCP server rounds COD amounts to whole leva; reconnect with the raw flag to see the collected cash."),
]

_TOPICS = [
    ("customs", "Customs hold", "митническа проверка", ["customs", "hold", "declaration", "invoice"]),
    ("returns", "Returns", "връщане на пратка", ["return", "label", "refund", "sender"]),
    ("courier-app", "CourierApp", "приложението на куриера", ["courier", "app", "login", "route"]),
    ("invoices", "Invoices", "фактура", ["invoice", "vat", "company", "billing"]),
    ("pickup", "Pickup requests", "заявка за взимане", ["pickup", "slot", "window", "courier"]),
    ("lockers", "Parcel lockers", "автомат за пратки", ["locker", "code", "door", "expired"]),
    ("damage", "Damaged parcels", "повредена пратка", ["damage", "photo", "claim", "packaging"]),
    ("tariffs", "Tariffs", "тарифа", ["tariff", "weight", "volume", "price"]),
]
_ASPECTS = ["how it works", "common error", "what to tell the customer", "who fixes it", "limits",
            "the status codes", "the report", "escalation", "peak season", "the API field",
            "the depot view", "the sender portal"]


@dataclass
class Corpus:
    """What :func:`build` made.

    Attributes:
        v1: the v1 folder. workspace: the workspace. files: the v1 file names.
        expected: v1 stem → the class the cheap signals should suggest, for the domains' files.
        cases: domain → the held-out cases file (triage format).
        missing: the file names MEMORY.md lists but that do not exist.
    """

    v1: Path
    workspace: Path
    files: list[str] = field(default_factory=list)
    expected: dict[str, str] = field(default_factory=dict)
    cases: dict[str, Path] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


def _write(path: Path, title: str, body: str) -> None:
    path.write_text(f"# {title}\n\n{body}\n", "utf-8")


def build(root: Path, filler: int = 300, seed: int = 7) -> Corpus:
    """Write the v1 folder ``root/v1``, the workspace ``root/ws`` and the cases ``root/cases``.

    Args:
        filler: how many files of other topics to add (a few hundred makes it realistic).
        seed: the random seed (the corpus is the same for the same seed).
    """
    rnd = random.Random(seed)
    v1 = root / "v1"
    v1.mkdir(parents=True)
    corpus = Corpus(v1, root / "ws")
    index: list[str] = []

    def add(stem: str, title: str, line: str, body: str, expected: str | None = None) -> None:
        _write(v1 / f"{stem}.md", title, body)
        corpus.files.append(f"{stem}.md")
        index.append(f"- [{title}]({stem}.md) — {line}")
        if expected:
            corpus.expected[stem] = expected

    for stem, title, line, body in _LOST:
        add(stem, title, line, body, "article")
    add(*_LOST_CHECKLIST, expected="mechanic")
    add(*_LOST_DIARY, expected="experience")
    add(*_LOST_PII, expected="article")
    add(*_LOST_DUP, expected="drop")
    add(*_LOST_QUIRK, expected="drop")
    for stem, title, line, body in _COD:
        add(stem, title, line, body, "drop")
    # a COD file worth keeping, so the failing domain is not empty
    add("cod-payout-timing", "COD payout timing", "When the COD money reaches the sender's bank",
        "COD collected on a working day is paid out the next working day in one payout file per sender.",
        "article")
    for n in range(filler):
        key, name, bg, vocab = _TOPICS[n % len(_TOPICS)]
        aspect = _ASPECTS[(n // len(_TOPICS)) % len(_ASPECTS)]
        stem = f"{key}-{n:03d}"
        words = rnd.sample(vocab, 3)
        title = f"{name}: {aspect}"
        body = (f"{name} — {aspect}. The {words[0]} and the {words[1]} decide what happens to the {words[2]}. "
                f"Клиентите питат за „{bg}“. Check the {words[0]} first, then the {words[1]}.")
        kind = n % 10
        if kind == 3:  # a dated diary
            stem = f"2026-0{1 + n % 9}-{10 + n % 18:02d}-{key}-{n:03d}"
            body = f"On {10 + n % 18}.0{1 + n % 9}.2026 a customer wrote about the {words[0]}. Ticket {1000 + n}. " + body
        elif kind == 5:  # a session workaround
            stem = f"{key}-session-workaround-{n:03d}"
            body = f"Workaround: the {name} tool call times out; restart the session and reconnect. " + body
        elif kind == 7:  # a discipline stored as an article
            stem = f"{key}-rules-{n:03d}"
            body = (f"Always follow these for {name.lower()}:\n\n1. Always check the {words[0]}.\n"
                    f"2. Never skip the {words[1]}.\n3. Always record the {words[2]}.\n")
        elif kind == 9 and n > 20:  # a duplicate of an earlier file of the same topic
            body = (v1 / corpus.files[-9]).read_text("utf-8").split("\n", 2)[-1].strip()
        add(stem, title, f"{name}, {aspect}", body)
    # lines pointing at files that do not exist
    for stem in ("old-courier-faq", "lost-parcel-2025-archive", "cod-legacy-notes"):
        corpus.missing.append(f"{stem}.md")
        index.append(f"- [{stem}]({stem}.md) — a note that was moved away")
    (v1 / "MEMORY.md").write_text("# Memory\n\n" + "\n".join(index) + "\n", "utf-8")

    _workspace(corpus.workspace)
    cases = root / "cases"
    cases.mkdir()
    corpus.cases[PASS_DOMAIN] = _cases(cases / "parcels-lost.jsonl", [
        ("lost-1", "Здравейте, пратката не е сканирана от дни и не знам къде е", ["lost-scan-gap"]),
        ("lost-2", "Пратката ми стои на едно място вече седмица, няма движение по товарителницата", ["lost-scan-gap"]),
        ("lost-3", "Искам да подам рекламация за изгубена пратка", ["depot-search"]),
        ("lost-4", "Доставката е в грешен град, пратката отиде в друго село", ["address-geocoding"]),
        ("lost-5", "Куриерът каза че е доставена но не се вижда в системата", ["handheld-offline"]),
        ("lost-6", "Защо пратката тръгна към подателя, пратката се връща обратно", ["return-to-sender"]),
    ], "bg")
    corpus.cases[FAIL_DOMAIN] = _cases(cases / "cod-payments.jsonl", [
        ("cod-1", "COD payout missing from our bank account, where is the payout file?", ["cod-payout-session-workaround"]),
        ("cod-2", "Statement shows SETTLED but the transfer is missing", ["cod-settled-quirk"]),
        ("cod-3", "The COD amount differs from the collected cash", ["cod-amount-mcp"]),
    ], "en")
    return corpus


def _cases(path: Path, rows: list[tuple[str, str, list[str]]], language: str) -> Path:
    path.write_text("".join(json.dumps({"id": i, "ticket": t, "language": language, "relevant": r,
                                        "near_miss": []}, ensure_ascii=False) + "\n" for i, t, r in rows), "utf-8")
    return path


def _workspace(ws: Path) -> None:
    """A workspace with ``support`` and its two domains (owned, with seeds and vocabulary in
    their front matter) and an ``experience`` node."""
    mem = ws / "memory"
    (mem / "support" / "parcels-lost").mkdir(parents=True)
    (mem / "support" / "cod-payments").mkdir(parents=True)
    (mem / "support" / "experience").mkdir(parents=True)
    (mem / "AGENTS.md").write_text("---\nowner: root\n---\n# Memory\n\n## Child nodes\n\n"
                                   "- [Support](support/AGENTS.md) — the support desk\n", "utf-8")
    (mem / "support" / "AGENTS.md").write_text(
        "---\nowner: support.lead\n---\n# Support\n\n## Child nodes\n\n"
        "- [Parcels seemingly lost](parcels-lost/AGENTS.md) — scan gaps and the depot search\n"
        "- [COD payments](cod-payments/AGENTS.md) — cash on delivery payouts\n"
        "- [Experience](experience/AGENTS.md) — past support cases\n", "utf-8")
    (mem / "support" / "parcels-lost" / "AGENTS.md").write_text(
        "---\nowner: support.parcels-lost\nseeds: [lost-scan-gap.md, depot-search.md]\n"
        "vocabulary: [lost parcel, scan gap, depot search, wrong depot, изгубена пратка, не е сканирана]\n---\n"
        "# Parcels seemingly lost\n\nScan gaps, the depot search and addresses that geocode wrong.\n", "utf-8")
    (mem / "support" / "cod-payments" / "AGENTS.md").write_text(
        "---\nowner: support.cod\nvocabulary: [COD payout, SETTLED, COD amount]\n---\n"
        "# COD payments\n\nCash on delivery: collecting it and paying it out.\n", "utf-8")
    (mem / "support" / "experience" / "AGENTS.md").write_text(
        "---\nowner: support.curator\n---\n# Experience\n\nPast support cases, one file per case.\n", "utf-8")
