"""Text analysis for search: English and Bulgarian, in Cyrillic or Latin letters.

One analyzer serves indexing and querying, so a word is reduced the same way on both sides.
For a text it yields *terms* with their position and character span in the text as given
(code points, so highlighting lands on whole words after emoji, CJK or Cyrillic).

Steps, per word:

1. **Tokenising** (:func:`words`): Unicode letters and digits (combining marks stay inside
   the word, so NFD text and stress marks do not split it). Letters and digits joined by
   ``- _ . / : @`` form one *compound* (``ORA-00001``, ``PK_POLICY``, ``POL.PK_POLICY``,
   ``/api/claims/submit``); the compound is kept whole and split into its parts, and each
   part is split again at lower-to-upper case changes (``NullPointerException`` → ``null``,
   ``pointer``, ``exception`` plus the whole word).
2. **Normalising** (:func:`normalize`): NFC, Unicode case folding, stress marks removed
   (combining acute/grave), ``ё`` → ``е`` and ``ѝ`` → ``и``, diacritics of Latin letters
   removed (``café`` → ``cafe``). Whoosh splits NFD words and stems nothing in Bulgarian
   (LIBRARY-NOTES, Whoosh/Cyrillic), hence this module.
3. **Stemming**: Latin words by the English Porter2 (Snowball) stemmer, through PyStemmer;
   Cyrillic words by :func:`stem_bg`, the light stemmer for Bulgarian of J. Savoy,
   "Searching strategies for the Bulgarian language", *Information Retrieval* 10(6), 2007
   (as implemented in Lucene's ``BulgarianStemmer``).
4. **Latin-letter Bulgarian** ("shlyokavitsa"): every alphabetic word also yields a
   *sound key* (:func:`translit_key`, marked with :data:`KEY_MARK`): Cyrillic is
   transliterated by the Bulgarian official system (Transliteration Act 2009), Latin is read
   back into Cyrillic first, both go through :func:`stem_bg`, and the result is folded
   (``ts``/``ch``/``c`` → ``c``, ``sh`` → ``s``, ``zh``/``j`` → ``z``, ``y`` → ``i`` …), so
   ``ne moga da izdam polica`` and ``не мога да издам полица`` share their keys.
5. **Stop words**: the English list of Whoosh and a Bulgarian list (:data:`BG_STOP`,
   function words only) are dropped, in both scripts.

Nothing here knows any corpus: the rules are those of the two languages.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import Stemmer

#: Prefix of a sound-key term (step 4); a user's words never start with it.
KEY_MARK = "\u00a7"

#: English stop words: Whoosh's list for ``en`` (``whoosh.lang.stopwords.stoplists["en"]``,
#: the English list of the Snowball project), written out so that only the engine imports
#: Whoosh (a test checks the two agree).
EN_STOP: frozenset[str] = frozenset(["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "did", "do", "does", "doing", "don", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "s", "same", "she", "should", "so", "some", "such", "t", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "you", "your", "yours", "yourself", "yourselves"])

#: Bulgarian function words: pronouns, prepositions, conjunctions, particles, auxiliaries.
BG_STOP: frozenset[str] = frozenset(["а", "аз", "ако", "ала", "би", "бил", "била", "били", "било", "бъде", "в", "вас", "ви", "вие", "вече", "все", "всеки", "всички", "всичко", "всяка", "във", "въпреки", "върху", "г", "ги", "го", "да", "дали", "до", "докато", "дори", "е", "ето", "за", "зад", "заради", "защо", "защото", "и", "из", "или", "им", "има", "имат", "като", "кога", "когато", "кое", "кои", "който", "която", "което", "които", "към", "ли", "м", "ме", "между", "ми", "мн", "много", "мога", "може", "му", "на", "над", "нас", "не", "него", "нея", "ни", "ние", "нито", "но", "някой", "някои", "нещо", "нищо", "обаче", "около", "от", "още", "пак", "по", "под", "поради", "после", "пред", "при", "с", "са", "се", "си", "сега", "след", "със", "сме", "сте", "съм", "сме", "та", "те", "тези", "ти", "то", "това", "този", "той", "тук", "тя", "тях", "у", "уж", "че", "ще", "я"])

_CYR = re.compile(r"[\u0400-\u04ff]")
_LATIN_LETTER = re.compile(r"[a-z]")


def _mark_spans() -> list[tuple[int, int]]:
    """Every combining mark (Unicode categories Mn, Mc, Me) below U+1F000 as inclusive
    (first, last) code point spans, by this interpreter's Unicode database."""
    if unicodedata.unidata_version == _MARK_SPANS_VERSION:
        return list(_MARK_SPANS)
    return _walk_mark_spans()


def _walk_mark_spans() -> list[tuple[int, int]]:
    """:func:`_mark_spans` read from the Unicode database code point by code point."""
    spans: list[tuple[int, int]] = []
    start = None
    for cp in range(0x300, 0x1F000 + 1):
        mark = cp < 0x1F000 and unicodedata.category(chr(cp)).startswith("M")
        if mark and start is None:
            start = cp
        elif not mark and start is not None:
            spans.append((start, cp - 1))
            start = None
    return spans


def _mark_ranges() -> str:
    """Every combining mark (Unicode categories Mn, Mc, Me) as regex class ranges. Python's
    ``\\w`` leaves them out, so the vowel signs of Devanagari, Tamil and other Indic scripts
    cut their words apart; they belong inside words like Latin accents."""
    return "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in _mark_spans())


#: :func:`_mark_spans` for the Unicode version below, written out: walking 126,000 code points
#: cost every process that loads the analyser ~30 ms (a test checks the table against the walk).
_MARK_SPANS_VERSION = "14.0.0"
_MARK_SPANS = (
    (0x300, 0x36f), (0x483, 0x489), (0x591, 0x5bd), (0x5bf, 0x5bf), (0x5c1, 0x5c2), (0x5c4, 0x5c5),
    (0x5c7, 0x5c7), (0x610, 0x61a), (0x64b, 0x65f), (0x670, 0x670), (0x6d6, 0x6dc), (0x6df, 0x6e4),
    (0x6e7, 0x6e8), (0x6ea, 0x6ed), (0x711, 0x711), (0x730, 0x74a), (0x7a6, 0x7b0), (0x7eb, 0x7f3),
    (0x7fd, 0x7fd), (0x816, 0x819), (0x81b, 0x823), (0x825, 0x827), (0x829, 0x82d), (0x859, 0x85b),
    (0x898, 0x89f), (0x8ca, 0x8e1), (0x8e3, 0x903), (0x93a, 0x93c), (0x93e, 0x94f), (0x951, 0x957),
    (0x962, 0x963), (0x981, 0x983), (0x9bc, 0x9bc), (0x9be, 0x9c4), (0x9c7, 0x9c8), (0x9cb, 0x9cd),
    (0x9d7, 0x9d7), (0x9e2, 0x9e3), (0x9fe, 0x9fe), (0xa01, 0xa03), (0xa3c, 0xa3c), (0xa3e, 0xa42),
    (0xa47, 0xa48), (0xa4b, 0xa4d), (0xa51, 0xa51), (0xa70, 0xa71), (0xa75, 0xa75), (0xa81, 0xa83),
    (0xabc, 0xabc), (0xabe, 0xac5), (0xac7, 0xac9), (0xacb, 0xacd), (0xae2, 0xae3), (0xafa, 0xaff),
    (0xb01, 0xb03), (0xb3c, 0xb3c), (0xb3e, 0xb44), (0xb47, 0xb48), (0xb4b, 0xb4d), (0xb55, 0xb57),
    (0xb62, 0xb63), (0xb82, 0xb82), (0xbbe, 0xbc2), (0xbc6, 0xbc8), (0xbca, 0xbcd), (0xbd7, 0xbd7),
    (0xc00, 0xc04), (0xc3c, 0xc3c), (0xc3e, 0xc44), (0xc46, 0xc48), (0xc4a, 0xc4d), (0xc55, 0xc56),
    (0xc62, 0xc63), (0xc81, 0xc83), (0xcbc, 0xcbc), (0xcbe, 0xcc4), (0xcc6, 0xcc8), (0xcca, 0xccd),
    (0xcd5, 0xcd6), (0xce2, 0xce3), (0xd00, 0xd03), (0xd3b, 0xd3c), (0xd3e, 0xd44), (0xd46, 0xd48),
    (0xd4a, 0xd4d), (0xd57, 0xd57), (0xd62, 0xd63), (0xd81, 0xd83), (0xdca, 0xdca), (0xdcf, 0xdd4),
    (0xdd6, 0xdd6), (0xdd8, 0xddf), (0xdf2, 0xdf3), (0xe31, 0xe31), (0xe34, 0xe3a), (0xe47, 0xe4e),
    (0xeb1, 0xeb1), (0xeb4, 0xebc), (0xec8, 0xecd), (0xf18, 0xf19), (0xf35, 0xf35), (0xf37, 0xf37),
    (0xf39, 0xf39), (0xf3e, 0xf3f), (0xf71, 0xf84), (0xf86, 0xf87), (0xf8d, 0xf97), (0xf99, 0xfbc),
    (0xfc6, 0xfc6), (0x102b, 0x103e), (0x1056, 0x1059), (0x105e, 0x1060), (0x1062, 0x1064), (0x1067, 0x106d),
    (0x1071, 0x1074), (0x1082, 0x108d), (0x108f, 0x108f), (0x109a, 0x109d), (0x135d, 0x135f),
    (0x1712, 0x1715), (0x1732, 0x1734), (0x1752, 0x1753), (0x1772, 0x1773), (0x17b4, 0x17d3),
    (0x17dd, 0x17dd), (0x180b, 0x180d), (0x180f, 0x180f), (0x1885, 0x1886), (0x18a9, 0x18a9),
    (0x1920, 0x192b), (0x1930, 0x193b), (0x1a17, 0x1a1b), (0x1a55, 0x1a5e), (0x1a60, 0x1a7c),
    (0x1a7f, 0x1a7f), (0x1ab0, 0x1ace), (0x1b00, 0x1b04), (0x1b34, 0x1b44), (0x1b6b, 0x1b73),
    (0x1b80, 0x1b82), (0x1ba1, 0x1bad), (0x1be6, 0x1bf3), (0x1c24, 0x1c37), (0x1cd0, 0x1cd2),
    (0x1cd4, 0x1ce8), (0x1ced, 0x1ced), (0x1cf4, 0x1cf4), (0x1cf7, 0x1cf9), (0x1dc0, 0x1dff),
    (0x20d0, 0x20f0), (0x2cef, 0x2cf1), (0x2d7f, 0x2d7f), (0x2de0, 0x2dff), (0x302a, 0x302f),
    (0x3099, 0x309a), (0xa66f, 0xa672), (0xa674, 0xa67d), (0xa69e, 0xa69f), (0xa6f0, 0xa6f1),
    (0xa802, 0xa802), (0xa806, 0xa806), (0xa80b, 0xa80b), (0xa823, 0xa827), (0xa82c, 0xa82c),
    (0xa880, 0xa881), (0xa8b4, 0xa8c5), (0xa8e0, 0xa8f1), (0xa8ff, 0xa8ff), (0xa926, 0xa92d),
    (0xa947, 0xa953), (0xa980, 0xa983), (0xa9b3, 0xa9c0), (0xa9e5, 0xa9e5), (0xaa29, 0xaa36),
    (0xaa43, 0xaa43), (0xaa4c, 0xaa4d), (0xaa7b, 0xaa7d), (0xaab0, 0xaab0), (0xaab2, 0xaab4),
    (0xaab7, 0xaab8), (0xaabe, 0xaabf), (0xaac1, 0xaac1), (0xaaeb, 0xaaef), (0xaaf5, 0xaaf6),
    (0xabe3, 0xabea), (0xabec, 0xabed), (0xfb1e, 0xfb1e), (0xfe00, 0xfe0f), (0xfe20, 0xfe2f),
    (0x101fd, 0x101fd), (0x102e0, 0x102e0), (0x10376, 0x1037a), (0x10a01, 0x10a03), (0x10a05, 0x10a06),
    (0x10a0c, 0x10a0f), (0x10a38, 0x10a3a), (0x10a3f, 0x10a3f), (0x10ae5, 0x10ae6), (0x10d24, 0x10d27),
    (0x10eab, 0x10eac), (0x10f46, 0x10f50), (0x10f82, 0x10f85), (0x11000, 0x11002), (0x11038, 0x11046),
    (0x11070, 0x11070), (0x11073, 0x11074), (0x1107f, 0x11082), (0x110b0, 0x110ba), (0x110c2, 0x110c2),
    (0x11100, 0x11102), (0x11127, 0x11134), (0x11145, 0x11146), (0x11173, 0x11173), (0x11180, 0x11182),
    (0x111b3, 0x111c0), (0x111c9, 0x111cc), (0x111ce, 0x111cf), (0x1122c, 0x11237), (0x1123e, 0x1123e),
    (0x112df, 0x112ea), (0x11300, 0x11303), (0x1133b, 0x1133c), (0x1133e, 0x11344), (0x11347, 0x11348),
    (0x1134b, 0x1134d), (0x11357, 0x11357), (0x11362, 0x11363), (0x11366, 0x1136c), (0x11370, 0x11374),
    (0x11435, 0x11446), (0x1145e, 0x1145e), (0x114b0, 0x114c3), (0x115af, 0x115b5), (0x115b8, 0x115c0),
    (0x115dc, 0x115dd), (0x11630, 0x11640), (0x116ab, 0x116b7), (0x1171d, 0x1172b), (0x1182c, 0x1183a),
    (0x11930, 0x11935), (0x11937, 0x11938), (0x1193b, 0x1193e), (0x11940, 0x11940), (0x11942, 0x11943),
    (0x119d1, 0x119d7), (0x119da, 0x119e0), (0x119e4, 0x119e4), (0x11a01, 0x11a0a), (0x11a33, 0x11a39),
    (0x11a3b, 0x11a3e), (0x11a47, 0x11a47), (0x11a51, 0x11a5b), (0x11a8a, 0x11a99), (0x11c2f, 0x11c36),
    (0x11c38, 0x11c3f), (0x11c92, 0x11ca7), (0x11ca9, 0x11cb6), (0x11d31, 0x11d36), (0x11d3a, 0x11d3a),
    (0x11d3c, 0x11d3d), (0x11d3f, 0x11d45), (0x11d47, 0x11d47), (0x11d8a, 0x11d8e), (0x11d90, 0x11d91),
    (0x11d93, 0x11d97), (0x11ef3, 0x11ef6), (0x16af0, 0x16af4), (0x16b30, 0x16b36), (0x16f4f, 0x16f4f),
    (0x16f51, 0x16f87), (0x16f8f, 0x16f92), (0x16fe4, 0x16fe4), (0x16ff0, 0x16ff1), (0x1bc9d, 0x1bc9e),
    (0x1cf00, 0x1cf2d), (0x1cf30, 0x1cf46), (0x1d165, 0x1d169), (0x1d16d, 0x1d172), (0x1d17b, 0x1d182),
    (0x1d185, 0x1d18b), (0x1d1aa, 0x1d1ad), (0x1d242, 0x1d244), (0x1da00, 0x1da36), (0x1da3b, 0x1da6c),
    (0x1da75, 0x1da75), (0x1da84, 0x1da84), (0x1da9b, 0x1da9f), (0x1daa1, 0x1daaf), (0x1e000, 0x1e006),
    (0x1e008, 0x1e018), (0x1e01b, 0x1e021), (0x1e023, 0x1e024), (0x1e026, 0x1e02a), (0x1e130, 0x1e136),
    (0x1e2ae, 0x1e2ae), (0x1e2ec, 0x1e2ef), (0x1e8d0, 0x1e8d6), (0x1e944, 0x1e94a),
)
_MARKS = _mark_ranges()
# A word: letters/digits (combining marks allowed inside); a compound joins words by connectors.
_WORD = rf"(?:[^\W_]|[{_MARKS}])+"
_WHOLE_WORD = re.compile(_WORD)


def is_word(text: str) -> bool:
    """True when ``text`` is one word of letters and digits (combining marks inside)."""
    return _WHOLE_WORD.fullmatch(text) is not None


COMPOUND = re.compile(rf"{_WORD}(?:[-_./:@]+{_WORD})*")
_CONNECTOR = re.compile(r"[-_./:@]+")
# The tails of a compound after a "." "/" ":" or "@" (their own compounds when joined by - or _)
_SUB_COMPOUND = re.compile(rf"(?<=[./:@]){_WORD}(?:[-_]+{_WORD})*")
# Case changes inside a part: "NullPointerException", "HTTPServer", "iPhone"
_CAMEL = re.compile(rf"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z\u00df-\u00ff]+|[A-Z]+|\d+|(?:[^\W\d_a-zA-Z]|[{_MARKS}])+")

#: Bulgarian official transliteration (Transliteration Act, 2009).
_BG_TO_LATIN = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ж": "zh", "з": "z",
    "и": "i", "й": "y", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p",
    "р": "r", "с": "s", "т": "t", "у": "u", "ф": "f", "х": "h", "ц": "ts", "ч": "ch",
    "ш": "sh", "щ": "sht", "ъ": "a", "ь": "y", "ю": "yu", "я": "ya",
    # Russian/other letters met in mixed text
    "ы": "y", "э": "e", "ё": "e", "і": "i", "ї": "i", "є": "e", "ў": "u",
}
#: Reading Latin-letter Bulgarian back into Cyrillic: longest match first.
_LATIN_TO_BG = [
    ("sht", "щ"), ("sch", "щ"), ("zh", "ж"), ("ch", "ч"), ("sh", "ш"), ("ts", "ц"), ("tz", "ц"),
    ("yu", "ю"), ("ju", "ю"), ("iu", "ю"), ("ya", "я"), ("ja", "я"), ("kh", "х"),
    ("a", "а"), ("b", "б"), ("c", "ц"), ("d", "д"), ("e", "е"), ("f", "ф"), ("g", "г"),
    ("h", "х"), ("i", "и"), ("j", "й"), ("k", "к"), ("l", "л"), ("m", "м"), ("n", "н"),
    ("o", "о"), ("p", "п"), ("q", "я"), ("r", "р"), ("s", "с"), ("t", "т"), ("u", "у"),
    ("v", "в"), ("w", "в"), ("x", "х"), ("y", "й"), ("z", "з"),
]
_LATIN_RE = re.compile("|".join(re.escape(a) for a, _ in _LATIN_TO_BG))
_LATIN_MAP = dict(_LATIN_TO_BG)
# Folding of spelling variants, applied to Latin text (after transliteration).
_FOLDS = [("sht", "st"), ("tz", "c"), ("ts", "c"), ("ch", "c"), ("sh", "s"), ("zh", "z"),
          ("kh", "h"), ("x", "h"), ("w", "v"), ("q", "ia"), ("j", "i"), ("y", "i")]


def normalize(word: str) -> str:
    """Fold one word for matching: compatibility forms (fullwidth ``ｒｏｕｔｅ``, ligatures
    ``ﬁ``) to plain letters (NFKD), case fold, no stress marks, ``ё``→``е``, ``ѝ``→``и``.

    Latin letters lose their diacritics (``é`` → ``e``); Cyrillic ``й`` is kept (it is a
    letter, not an accented ``и``). Input and output are ``str`` (NFC); never raises.
    """
    text = unicodedata.normalize("NFKD", word.casefold())
    out: list[str] = []
    for ch in text:
        base = out[-1] if out else ""
        # accents of Latin, Greek and Cyrillic letters go, but the breve of й (и + U+0306);
        # the signs of other scripts (Devanagari, Tamil vowel signs) are part of their letters
        if unicodedata.combining(ch) and base and base < "\u0530":
            if ch == "\u0306" and base in "иу":
                out.append(ch)
            continue
        out.append(ch)
    text = unicodedata.normalize("NFC", "".join(out))
    return text.replace("ё", "е").replace("ѝ", "и")


def stem_bg(word: str) -> str:  # noqa: C901 - Lucene's BulgarianStemmer step for step, kept comparable
    """Savoy's light stemmer for Bulgarian (Information Retrieval 10(6), 2007).

    Removes the definite article (``-ът -ят -та -то -те -ия -ият``), plural endings
    (``-ове -еве -ища -ци -зи -си -и``, with the stem changes ``ц→к``, ``з→г``, ``с→х``,
    ``е…и → я``) and a final vowel, then rewrites ``-ен`` → ``-н`` and a final ``ъ+C`` →
    ``C``; words under 4 letters are kept. Rules and length limits as in Lucene's
    ``org.apache.lucene.analysis.bg.BulgarianStemmer``.

    Args:
        word: a lower-case Cyrillic word (see :func:`normalize`).

    Returns:
        The stem (``str``), possibly the word itself.
    """
    n = len(word)
    if n < 4:
        return word
    w = word  # the letters; the stem is w[:n]
    ends = w.endswith  # ends(suffix, 0, n): does w[:n] end so

    if n > 5 and ends("ища", 0, n):
        return w[: n - 3]
    # article
    if n > 6 and ends("ият", 0, n):
        n -= 3
    elif n > 5 and ends(("ът", "то", "те", "та", "ия"), 0, n) or n > 4 and ends("ят", 0, n):
        n -= 2
    # plural
    if n > 6 and ends("овци", 0, n) or n > 6 and ends("ове", 0, n):
        n -= 3
    elif n > 6 and ends("еве", 0, n):
        w = w[: n - 3] + "й" + w[n - 2:]
        n -= 2
    elif n > 5 and ends("ища", 0, n):
        n -= 3
    elif n > 5 and ends("та", 0, n):
        n -= 2
    elif n > 5 and ends("ци", 0, n):
        w = w[: n - 2] + "к" + w[n - 1:]
        n -= 1
    elif n > 5 and ends("зи", 0, n):
        w = w[: n - 2] + "г" + w[n - 1:]
        n -= 1
    elif n > 5 and w[n - 3] == "е" and w[n - 1] == "и":
        w = w[: n - 3] + "я" + w[n - 2:]
        n -= 1
    elif n > 4 and ends("си", 0, n):
        w = w[: n - 2] + "х" + w[n - 1:]
        n -= 1
    elif n > 4 and ends("и", 0, n):
        n -= 1
    ends = w.endswith
    if n > 3:
        if ends("я", 0, n):
            n -= 1
        if ends(("а", "о", "е"), 0, n):
            n -= 1
    if n > 4 and ends("ен", 0, n):
        w = w[: n - 2] + "н" + w[n - 1:]
        n -= 1
    if n > 5 and w[n - 2] == "ъ":
        w = w[: n - 2] + w[n - 1] + w[n:]
        n -= 1
    return w[:n]


def to_latin(word: str) -> str:
    """Transliterate Cyrillic letters by the Bulgarian official system; others unchanged."""
    return "".join(_BG_TO_LATIN.get(ch, ch) for ch in word)


def to_cyrillic(word: str) -> str:
    """Read a Latin-letter Bulgarian word back into Cyrillic (longest spelling first).

    ``izdam`` → ``издам``, ``polica`` → ``полица``, ``zatvorya`` → ``затворя``; a final
    ``-ia``/``-iya`` is read as ``-ия``. Non-Latin characters are kept.
    """
    if word.endswith("iya"):
        word = word[:-3] + "\x00"
    elif word.endswith("ia") and len(word) > 3:
        word = word[:-2] + "\x00"
    out = _LATIN_RE.sub(lambda m: _LATIN_MAP[m.group(0)], word)
    return out.replace("\x00", "ия")


def _fold(latin: str) -> str:
    for a, b in _FOLDS:
        latin = latin.replace(a, b)
    # collapse doubled letters ("iia" from "iya", "ss")
    return re.sub(r"(.)\1+", r"\1", latin)


def _bg_plural_iya(word: str) -> str:
    """memtui's one addition to Savoy's rules: the plural ``-ии`` of ``-ия`` nouns is read as
    ``-ия`` (``квитанции`` → ``квитанция``), which the light stemmer leaves apart."""
    return word[:-1] + "я" if len(word) > 5 and word.endswith("ии") else word


@lru_cache(maxsize=65536)
def translit_key(word: str) -> str:
    """The sound key of a normalised word, shared by its Cyrillic and Latin spellings.

    Args:
        word: a word from :func:`normalize` (Cyrillic or Latin letters; digits allowed).

    Returns:
        ``KEY_MARK`` + the folded Latin form of the word's Bulgarian stem, e.g.
        ``полицата`` and ``policata`` both give ``§polic``.
    """
    cyr = word if _CYR.search(word) else to_cyrillic(word)
    return KEY_MARK + _fold(to_latin(stem_bg(_bg_plural_iya(cyr))))


_STEMMERS = threading.local()


def _stem_en(word: str) -> str:
    """Snowball's English (Porter2) stem of a lower-case word, by PyStemmer (the Snowball
    project's libstemmer binding). A stemmer object is not thread-safe, so each thread
    keeps its own."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = Stemmer.Stemmer("english")
    return stemmer.stemWord(word)


@lru_cache(maxsize=65536)
def stem_word(word: str) -> str:
    """The plain term of a normalised word: Bulgarian stem for Cyrillic, English stem for
    Latin letters, the word itself when it holds digits or is a compound."""
    if any(ch.isdigit() for ch in word) or _CONNECTOR.search(word):
        return word
    if _CYR.search(word):
        return stem_bg(_bg_plural_iya(word))
    if _LATIN_LETTER.search(word) and word.isalpha():
        return _stem_en(word)
    return word


_BG_STOP_KEYS = frozenset(translit_key(w) for w in BG_STOP)


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a text as found by :func:`words`.

    Attributes:
        text: the word as written (a slice of the input).
        start, end: code-point offsets in the input (``text == input[start:end]``).
        pos: the word position (parts of a compound follow the whole, one position each).
        whole: this is a whole compound (``ORA-00001``), not one of its parts.
    """

    text: str
    start: int
    end: int
    pos: int
    whole: bool = False


def words(text: str) -> Iterator[Word]:
    """Split ``text`` into words, compounds kept whole and also split (step 1)."""
    pos = 0
    for m in COMPOUND.finditer(text):
        base = m.start()
        for piece, s, e, whole in split_chunk(m.group(0)):
            yield Word(piece, base + s, base + e, pos, whole)
            if not whole:
                pos += 1


#: Distinct chunks and words whose analysis is remembered (about 300 bytes each); text is
#: Zipfian, so the cache spares most of the per-word work of an index build.
ANALYSIS_CACHE = 100_000
#: Longest Cyrillic part after a Latin one in a word that is read as a Bulgarian ending of it
#: (``-а``, ``-ът``, ``-ва``, ``-ите``, ``-нат``), not as a word: the articles, plural and
#: verb endings of Bulgarian are at most three letters.
ENDING_LETTERS = 3


#: Letters that look alike in the two scripts (upper and lower case as they look), for
#: :func:`_one_script`.
_CYR_LOOKALIKES = dict(zip("АВЕКМНОРСТУХаеорсухіј", "ABEKMHOPCTYXaeopcyxij", strict=False))
_LAT_LOOKALIKES = {v: k for k, v in _CYR_LOOKALIKES.items()}
_SCRIPT_RUN = re.compile(r"[\u0400-\u04ff]+|[^\u0400-\u04ff]+")


def _one_script(piece: str) -> list[tuple[str, int, int]]:
    """A word mixing Latin and Cyrillic letters as one or more one-script words, offsets
    relative to ``piece`` (mixed-script tickets):

    - when every letter of the smaller script has a look-alike in the larger one
      (``PаyGate`` with a Cyrillic ``а``, ``пoлица`` with a Latin ``o``: a keyboard layout
      slip or a copied homoglyph), the word in the larger script alone;
    - otherwise, and always when the word is Latin letters then Cyrillic ones (``VPNа``,
      ``SMSът``: an English word given a Bulgarian ending without a hyphen), the word split
      where the script changes.

    A short Cyrillic ending after a Latin word (``VPN-а``, ``crash-ва``, ``SMSът``) is then
    no word of its own (see :func:`split_chunk`).

    A word in one script is returned as it is. Lengths never change, so offsets hold.
    """
    cyr = sum(1 for ch in piece if "\u0400" <= ch <= "\u04ff")
    lat = sum(1 for ch in piece if ch.isascii() and ch.isalpha())
    if not cyr or not lat:
        return [(piece, 0, len(piece))]
    to_major = _LAT_LOOKALIKES if cyr > lat else _CYR_LOOKALIKES
    runs = [(m.group(0), m.start(), m.end()) for m in _SCRIPT_RUN.finditer(piece)]
    ending = len(runs) == 2 and _CYR.search(runs[1][0]) is not None
    minority = {ch for ch in piece if (ch.isascii() and ch.isalpha()) == (cyr > lat) and ch.isalpha()}
    if not ending and all(ch in to_major for ch in minority):
        return [("".join(to_major[ch] if ch in minority else ch for ch in piece), 0, len(piece))]
    return runs


@lru_cache(maxsize=ANALYSIS_CACHE)
def split_chunk(chunk: str) -> tuple[tuple[str, int, int, bool], ...]:
    """The words of one compound chunk: ``(text, start, end, whole)`` relative to it; the
    whole compound and its sub-compounds first (``whole=True``), then each part. A part
    mixing scripts is made one-script first (:func:`_one_script`)."""
    out: list[tuple[str, int, int, bool]] = []
    parts: list[tuple[str, int, int]] = []
    pieces: list[tuple[str, int, int]] = []
    for pm in re.finditer(_WORD, chunk):
        pieces.extend((text, pm.start() + s, pm.start() + e) for text, s, e in _one_script(pm.group(0)))
    prev_latin = False
    for piece, start, end in pieces:
        cyrillic = _CYR.search(piece) is not None
        if cyrillic and prev_latin and len(piece) <= ENDING_LETTERS:
            prev_latin = False
            continue  # a Bulgarian ending given to a Latin word: "VPN-а", "app-ът", "crash-ва"
        prev_latin = not cyrillic and any(ch.isalpha() for ch in piece)
        sub = list(_CAMEL.finditer(piece)) if not cyrillic else []
        if len(sub) > 1:
            parts.append((piece, start, end))  # the camel word whole
            for sm in sub:
                parts.append((sm.group(0), start + sm.start(), start + sm.end()))
        else:
            parts.append((piece, start, end))
    if len(parts) > 1 and (_CONNECTOR.search(chunk)):
        out.append((chunk, 0, len(chunk), True))
        # "POL.PK_POLICY" is also "PK_POLICY"; "/api/claims/submit" also "claims/submit"
        for sm in _SUB_COMPOUND.finditer(chunk):
            if sm.start() > 0 and _CONNECTOR.search(sm.group(0)):
                out.append((sm.group(0), sm.start(), sm.end(), True))
    out.extend((piece, s, e, False) for piece, s, e in parts)
    return tuple(out)


#: :func:`split_chunk` without its cache, for the analyses that cache their own result per
#: chunk (:func:`_chunk_terms`, :func:`_chunk_spans`): through the cached one, a build
#: worker kept every chunk twice, its split and its terms (a 100k build worker's
#: resident memory was a third analysis caches).
_split_chunk_uncached = split_chunk.__wrapped__


def _keep_plain(norm: str) -> bool:
    if norm.isdigit():
        return len(norm) >= 3
    if len(norm) == 1 and not norm.isdigit():
        return False
    return norm not in EN_STOP and norm not in BG_STOP


def terms(text: str, keys: bool = True, plain: bool = True) -> Iterator[tuple[str, Word]]:
    """The index/query terms of ``text``: ``(term, word)`` pairs, stop words removed.

    Each kept word gives its plain term (:func:`stem_word`) and, when it has letters and
    ``keys`` is true, its sound key (:func:`translit_key`), unless that key is the key of a
    Bulgarian stop word. ``plain=False`` yields the sound keys only (the ``translit`` field).
    """
    for w in words(text):
        plain_term, key = word_terms(w.text, w.whole)
        if plain_term is None:
            continue
        if plain:
            yield plain_term, w
        if keys and key:
            yield key, w


def article_key(text: str) -> str | None:
    """A second sound key for a Latin-typed Bulgarian word ending in ``-at``/``-ut``: the
    full article ``-ът``, which the official transliteration writes ``-a`` (``skenerat`` =
    ``скенерът``) and older habits ``-u``, while the reading back to Cyrillic gives ``-ат``
    (new-user test: ``skenerat``, ``kurierut`` found nothing). For query words only: an
    ``-ат`` word (``адвокат``) keeps its own key too. ``None`` when it does not apply."""
    norm = normalize(text)
    if len(norm) < 5 or not norm.isascii() or not norm.isalpha() or norm[-2:] not in ("at", "ut"):
        return None
    key = translit_key(to_cyrillic(norm[:-2]) + "ът")
    return key if len(key) > 3 and key != translit_key(norm) else None


#: Latin-typing ("shlyokavitsa") readings of a letter that the official transliteration reads
#: otherwise: ``j`` for ``ж`` (``grajdanska`` = ``гражданска``, ``mejdu`` = ``между``; read
#: back as ``й`` by default), ``u`` and ``y`` for ``ъ`` (``kum`` = ``към``, ``pyt`` = ``път``;
#: the official system writes ``a``). ``yu``/``ju``/``iu`` (``ю``) and ``ya``/``yu`` are kept.
_READINGS = ((re.compile(r"j"), "ж"), (re.compile(r"(?<![yji])u"), "ъ"), (re.compile(r"y(?![au])"), "ъ"))


def reading_keys(text: str) -> list[str]:
    """The other sound keys of a Latin-typed Bulgarian query word: its
    ``-ът`` article (:func:`article_key`) and each of :data:`_READINGS` applied throughout
    the word, for the words where the default reading back to Cyrillic guesses one of two
    common spellings. For query words only (the index holds Cyrillic as written); ``[]``
    for a word that is not Latin letters only, or when no reading changes the key."""
    norm = normalize(text)
    if len(norm) < 3 or not norm.isascii() or not norm.isalpha():
        return []
    base = translit_key(norm)
    out: list[str] = []
    art = article_key(text)
    if art:
        out.append(art)
    for pattern, letter in _READINGS:
        changed = pattern.sub(letter, norm)
        if changed != norm:
            key = translit_key(to_cyrillic(changed))
            if len(key) > 3 and key != base and key not in out and key not in _BG_STOP_KEYS:
                out.append(key)
    return out


#: A word typed with the digits of Latin-typed Bulgarian: ``4`` for ``ч`` and ``6`` for ``ш``
#: (``4asa`` = ``часа``, ``pla6tat`` = ``плащат``), each digit followed by a letter (so
#: ``mp4``, ``ipv6`` stay as written).
_DIGIT_LETTERS = re.compile(r"(?<![\w])(?=[a-z46]*[a-z][a-z46]*[a-z])[a-z]*(?:[46][a-z]+)+(?![\w])", re.I)


def latin_digits(text: str) -> str:
    """``text`` with the ``4``/``6`` of each Latin-typed Bulgarian word read as ``ch``/``sh``
    (see :data:`_DIGIT_LETTERS`); every other character unchanged. For query text only."""
    return _DIGIT_LETTERS.sub(lambda m: m.group(0).replace("4", "ch").replace("6", "sh"), text)


@lru_cache(maxsize=ANALYSIS_CACHE)
def word_terms(text: str, whole: bool) -> tuple[str | None, str | None]:
    """``(plain term, sound key)`` of one word; ``(None, None)`` drops the word (stop word,
    single letter); ``key`` is ``None`` when the word has none worth indexing."""
    norm = normalize(text)
    if not norm or not _keep_plain(norm):
        return None, None
    key = translit_key(norm) if not whole and norm.isalpha() else ""
    if key in _BG_STOP_KEYS and not _CYR.search(norm):
        return None, None  # Bulgarian function word typed in Latin letters ("ne", "moga", "da")
    good_key = key if key and len(norm) > 2 and len(key) > 3 and key not in _BG_STOP_KEYS else None
    return stem_word(norm), good_key


def term_spans(text: str, keys: bool = True, plain: bool = True) -> Iterator[tuple[str, int, int]]:
    """``(term, start, end)`` for every term :func:`terms` gives (plain terms and, with
    ``keys``, sound keys), with the code-point offsets of its word; the fast path snippets
    use (no Word objects). With neither ``plain`` nor ``keys``, every word's span with an
    empty term (a prefix's snippet needs only the words)."""
    for m in COMPOUND.finditer(text):
        base = m.start()
        spans = _chunk_spans(m.group(0), keys) if plain or keys else _chunk_words(m.group(0))
        for term, s, e in spans:
            if plain or not keys or term.startswith(KEY_MARK):
                yield term, base + s, base + e


@lru_cache(maxsize=ANALYSIS_CACHE)
def _chunk_spans(chunk: str, keys: bool = True) -> tuple[tuple[str, int, int], ...]:
    """``(term, start, end)`` of one compound chunk, offsets relative to it (cached: words
    recur, and a snippet analyses every word of a field, a large share of a pasted
    ticket's time). Sound keys only with ``keys`` (the costly part)."""
    out: list[tuple[str, int, int]] = []
    for piece, s, e, whole in _split_chunk_uncached(chunk):
        plain_term, key = word_terms(piece, whole) if keys else (_plain_term(piece, whole), None)
        if plain_term is None:
            continue
        out.append((plain_term, s, e))
        if key:
            out.append((key, s, e))
    return tuple(out)


def _chunk_words(chunk: str) -> tuple[tuple[str, int, int], ...]:
    """``("", start, end)`` of every word of one compound chunk (no analysis)."""
    return tuple(("", s, e) for _piece, s, e, _whole in split_chunk(chunk))


def _plain_term(text: str, whole: bool) -> str | None:
    """The plain term of one word as :func:`word_terms` gives it, without computing its
    sound key (so a Bulgarian function word typed in Latin letters is not dropped: no
    query holds it, so a snippet never highlights it)."""
    norm = normalize(text)
    if not norm or not _keep_plain(norm):
        return None
    return stem_word(norm)


@lru_cache(maxsize=ANALYSIS_CACHE)
def _chunk_terms(chunk: str) -> tuple[tuple[str | None, str | None, int], ...]:
    """``(plain term, sound key, position step)`` of each word of one compound chunk: what
    :class:`MemtuiAnalyzer` yields for it, positions relative to the chunk (index speed)."""
    return tuple((*word_terms(piece, whole), 0 if whole else 1)
                 for piece, _s, _e, whole in _split_chunk_uncached(chunk))


def term_positions(text: str, keys: bool = True, plain: bool = True) -> tuple[dict[str, list[int]], int]:
    """``({term: [positions]}, words)`` of ``text``: the same terms and positions as
    :class:`MemtuiAnalyzer` gives Whoosh, without a token object per word (the index
    formats of :mod:`memtui.core.search.index` use it; about a third of an index build was
    the token stream). ``words`` is the number of positions used."""
    out: dict[str, list[int]] = {}
    pos = 0
    for m in COMPOUND.finditer(text):
        for plain_term, key, step in _chunk_terms(m.group(0)):
            if plain_term is not None:
                if plain:
                    got = out.get(plain_term)
                    if got is None:
                        out[plain_term] = [pos]
                    else:
                        got.append(pos)
                if keys and key:
                    got = out.get(key)
                    if got is None:
                        out[key] = [pos]
                    else:
                        got.append(pos)
            pos += step
    return out, pos


def term_positions_and_keys(text: str) -> tuple[dict[str, list[int]], int, dict[str, int]]:
    """:func:`term_positions` of the plain terms and, in the same pass, how often each sound
    key occurs: ``({term: [positions]}, words, {key: count})`` (an index build analysed a
    body twice, once for each)."""
    out: dict[str, list[int]] = {}
    keys: dict[str, int] = {}
    pos = 0
    for m in COMPOUND.finditer(text):
        for plain_term, key, step in _chunk_terms(m.group(0)):
            if plain_term is not None:
                got = out.get(plain_term)
                if got is None:
                    out[plain_term] = [pos]
                else:
                    got.append(pos)
                if key:
                    keys[key] = keys.get(key, 0) + 1
            pos += step
    return out, pos, keys
