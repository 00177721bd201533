"""The scans over many texts at once (memtui.core.scan.chunk) find what a scan of each text finds.

The fast path joins a node's texts into one chunk and runs the prefilters once over it; these
tests compare it with the straightforward scans on a varied corpus: the real texts of
../shared/corpus, the sample workspace, and generated texts with secrets and personal data
planted at the first and last line of a text (the chunk boundaries), in non-ASCII texts, after
characters whose case folding changes the length, in CRLF files.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest

from memtui.core import audit, scan
from memtui.core.scan import personal, secrets
from memtui.core.scan.chunk import Chunk
from memtui.core.tree import shape
from memtui.core.workspace import Workspace
from tests.test_audit_privacy_and_integrity import AWS, CARD, EGN, EMAIL, GITHUB, IBAN, PASSWORD, PHONE, SLACK, write

SAMPLE = Path(__file__).parent.parent / "sample_workspace"
TEXT_SUFFIXES = (".md", ".jsonl", ".json", ".txt", ".yaml", ".yml", ".toml")


def _token(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def planted() -> list[str]:
    """Texts with a secret or personal data on their first or last line (or alone), built
    at run time so that no file of the project holds a whole value."""
    rng = random.Random(17)
    b64 = string.ascii_letters + string.digits + "+/"
    word = string.ascii_letters + string.digits + "_-"
    values = [
        f"token {GITHUB}", f"aws {AWS}", f"password={PASSWORD}x9", f'password = "{PASSWORD}x9"', SLACK,
        "-----BEGIN RSA PRIVATE KEY-----", "url https://user:" + "s3cr3tpass@example.org/x",
        'jwt "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX2hlcmVfMTIz"',
        'hex "' + _token(rng, "0123456789abcdef", 32) + '"', "key: '" + _token(rng, b64, 40) + "'",
        "M" + _token(rng, word, 23) + "." + _token(rng, word, 6) + "." + _token(rng, word, 27),
        "bot " + _token(rng, string.digits, 9) + ":" + _token(rng, word, 35),
        "stripe sk_live_" + _token(rng, string.ascii_letters + string.digits, 24),
        f'api_key: "{_token(rng, b64, 30)}"', f"ſecret = '{_token(rng, b64, 20)}'",
        f"ЕГН {EGN}", f"call {PHONE}", f"mail {EMAIL}", f"IBAN {IBAN}", f"card {CARD}", "0888 123 456",
        "order 1234567890, on 2026-11-02", "phone ٠٨٨٨١٢٣٤٥٦",
    ]
    prose = ["The batch settles the payouts once a night.", "Пратката е в депото от вчера.",
             "Straße und Maß: ß folds to ss.", "C++ and a+b, with +1 and 10.0.0.1", "see [the guide](guide.md#runs)"]
    out: list[str] = []
    for i, value in enumerate(values):
        before, after = prose[i % len(prose)], prose[(i + 2) % len(prose)]
        out += [value, f"{value}\n{after}", f"{before}\n{value}", f"{before}\n{value}\n{after}\n",
                f"{before} {value}", f"{before}\r\n{value}\r\n", f"ß{value}"]
    return out + ["", "\n", "no newline at the end", "---\ntitle: x\ncreated: 2026-01-02\n---\nBody on 02.11.2026.\n"]


@pytest.fixture(scope="module")
def corpus(shared: Path) -> list[str]:
    """Every text file of the shared corpus and the sample workspace, as memtui reads them."""
    files = [p for root in (shared / "corpus", SAMPLE) for p in sorted(root.rglob("*"))
             if p.is_file() and p.suffix in TEXT_SUFFIXES and ".memtui" not in p.parts]
    assert len(files) > 100
    return [p.read_bytes().decode("utf-8", "replace") for p in files]


def chunks(texts: list[str], size: int) -> list[list[str]]:
    return [texts[i:i + size] for i in range(0, len(texts), size)]


@pytest.mark.slow
def test_chunked_secret_scan_equals_every_plugin_on_every_line(corpus: list[str]) -> None:
    texts = corpus + planted()
    reference = [secrets.every_line(t) for t in texts]
    for size in (1, 7, len(texts)):
        found = [hits for part in chunks(texts, size) for hits in secrets.find_many(part)]
        assert found == reference, f"chunks of {size}"
    kinds = {hit.kind for hits in reference for hit in hits}
    assert {"GitHub Token", "AWS Access Key", "Slack Token", "Private Key", "Basic Auth Credentials",
            "JSON Web Token", "Secret Keyword", "Hex High Entropy String", "Base64 High Entropy String",
            "Discord Bot Token", "Telegram Bot Token", "Stripe Access Key"} <= kinds
    # a planted value is found at its line, wherever it sits in the text
    assert all(secrets.find(t) for t in planted()[:7 * 15])


def test_chunked_personal_scan_equals_the_scan_of_each_text(corpus: list[str]) -> None:
    texts = corpus + planted()
    reference = [personal.find(t) for t in texts]
    for size in (1, 7, len(texts)):
        found = [hits for part in chunks(texts, size) for hits in personal.find_many(part)]
        assert found == reference, f"chunks of {size}"
    assert {p.code for hits in reference for p in hits} == {"pii-egn", "pii-phone", "pii-email", "pii-iban",
                                                            "pii-card"}


def test_a_text_without_diary_candidacy_has_no_diary_note(corpus: list[str]) -> None:
    from memtui.core import frontmatter

    texts = corpus + planted()
    chunk = Chunk(texts)
    bodies = {i: len(t.lstrip("\ufeff")) - len(frontmatter.split(t).body) for i, t in enumerate(texts)}
    candidates = shape.diary_candidates(chunk, bodies)
    noted = {i for i, t in enumerate(texts) if shape.diary_findings(frontmatter.split(t).body, "x", 1)}
    assert noted and noted <= candidates


def test_the_audit_reports_each_planted_article_as_its_own_scan_does(tmp_path: Path) -> None:
    """Many articles in one node are scanned as one chunk after the node index: every
    finding lands on its own article and line."""
    root = tmp_path / "ws"
    texts = planted()
    names = [f"a{i:03d}.md" for i in range(len(texts))]
    write(root, "memory/AGENTS.md", "---\nowner: o\n---\n# Root\n\n- [Notes](notes/AGENTS.md) — notes\n")
    write(root, "memory/notes/AGENTS.md", "---\nowner: p\n---\n# Notes\n\n"
          + "".join(f"- [{n}]({n}) — x\n" for n in names) + f"\nmail {EMAIL}\n")
    for name, text in zip(names, texts, strict=True):
        write(root, f"memory/notes/{name}", text)
    report = audit.run(Workspace.open(root), parallel=False, use_cache=False)
    got = {}
    for f in report.findings:
        if f.code == "secret" or f.code.startswith("pii-"):
            got.setdefault(f.path, []).append((f.code, f.line, f.column, f.fingerprint))
    want = {}
    for name, text in zip(names, texts, strict=True):
        shown = f"memory/notes/{name}"
        for f in scan.secret_findings(text, shown) + scan.personal_findings(text, shown):
            want.setdefault(shown, []).append((f.code, f.line, f.column, f.fingerprint))
    index = (root / "memory/notes/AGENTS.md").read_text(encoding="utf-8")
    want["memory/notes/AGENTS.md"] = [(f.code, f.line, f.column, f.fingerprint)
                                      for f in scan.personal_findings(index, "memory/notes/AGENTS.md")]
    assert len(want) > 40
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items() if v}


def test_threads_scanning_at_once_each_find_what_one_scan_finds() -> None:
    """Hyperscan's scratch space serves one scan at a time (a second one gets
    ``ScratchInUseError``): threads auditing at once, as the TUI's workers do, each scan
    with their own and find what a scan alone finds."""
    import threading

    texts = planted() * 1500  # megabytes: the scans overlap
    alone = Chunk(texts).hints(personal.HINTS_NAME)
    assert len(alone) > 10_000
    start = threading.Barrier(4)
    got: list[object] = []

    def work() -> None:
        chunk = Chunk(texts)
        start.wait()
        try:
            got.append(chunk.hints(personal.HINTS_NAME))
        except Exception as error:  # noqa: BLE001 - the test reports it
            got.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == [alone] * 4


def test_chunk_line_numbers_match_counting_newlines() -> None:
    """A hint's line was found by counting newlines from its text's start: quadratic in one big
    text (a 28 MB graph's backup scan took over 10 minutes). The index of line starts must give
    the same numbers."""
    import random

    from memtui.core.scan.chunk import Chunk

    rng = random.Random(7)
    texts = ["", "one line", "a\nb\n", "\n\n\n"] + [
        "\n".join("x" * rng.randint(0, 5) for _ in range(rng.randint(1, 30))) for _ in range(40)]
    chunk = Chunk(texts)
    for offset in range(len(chunk.data)):
        index = chunk.owner(offset)
        assert chunk.line(offset) == (index, chunk.data.count(b"\n", chunk.starts[index], offset))
