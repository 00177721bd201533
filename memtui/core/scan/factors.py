"""Required literals of a regular expression: a cheap, exact gate before the expensive match.

:func:`required` reads a pattern's syntax tree (Python's own parser) and returns a set of
case-folded strings one of which every match must contain, or ``None`` when no such set is
known. Searching a case-folded text for a few literals is a C-speed substring test, while a
complex case-insensitive pattern with look-behinds costs a Python ``re`` step at every
position; the detectors run a pattern only on text that passes its gate. This is the
"required factor" prefilter of literal-optimising regex engines (RE2's prefilter,
Hyperscan, ripgrep's literal extraction), kept minimal: a gate never rejects text the
pattern matches (tests check the detectors against an ungated scan), it only lets through
text the pattern then does not match.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from re import _parser as sre  # type: ignore[attr-defined]  # the parser of the re module itself

#: An exact alternative set larger than this is given up (the gate then uses a shorter factor).
_MAX_SET = 2048
#: A character class wider than this is not expanded into literals.
_MAX_CLASS = 8

_ZERO_WIDTH = {sre.AT, sre.ASSERT, sre.ASSERT_NOT}
_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", sre.MAX_REPEAT)}


_FOLD = [True]  # set per pattern by conditions(): fold literals of case-insensitive patterns only


def _char(code: int) -> str:
    return chr(code).casefold() if _FOLD[0] else chr(code)


def _class_chars(items: list) -> set[str] | None:
    chars: set[str] = set()
    for op, arg in items:
        if op is sre.LITERAL:
            chars.add(_char(arg))
        elif op is sre.RANGE and arg[1] - arg[0] < _MAX_CLASS:
            chars.update(_char(c) for c in range(arg[0], arg[1] + 1))
        else:  # NEGATE, CATEGORY, wide ranges
            return None
        if len(chars) > _MAX_CLASS:
            return None
    return chars


def _product(left: set[str], right: set[str]) -> set[str] | None:
    if len(left) * len(right) > _MAX_SET:
        return None
    return {a + b for a in left for b in right}


def _exact(node: tuple) -> set[str] | None:
    """Every string ``node`` can match, when that is a small finite set (else ``None``)."""
    op, arg = node
    if op is sre.LITERAL:
        return {_char(arg)}
    if op is sre.IN:
        return _class_chars(arg)
    if op in _ZERO_WIDTH:
        return {""}
    if op is sre.SUBPATTERN:
        return None if _folds_alone(arg) else _exact_seq(arg[-1])
    if op is sre.BRANCH:
        out: set[str] = set()
        for branch in arg[1]:
            part = _exact_seq(branch)
            if part is None:
                return None
            out |= part
        return out if len(out) <= _MAX_SET else None
    if op in _REPEATS and arg[1] <= 4:  # x{n}, x?, x{0,2}: every count spelled out
        item = _exact_seq(arg[2])
        if item is None:
            return None
        out = set()
        result: set[str] | None = {""}
        for count in range(arg[1] + 1):
            if result is None:
                return None
            if count >= arg[0]:
                out |= result
            result = _product(result, item)
        return out if len(out) <= _MAX_SET else None
    return None


def _exact_seq(seq) -> set[str] | None:  # noqa: ANN001 - sre SubPattern
    result: set[str] | None = {""}
    for node in seq:
        part = _exact(node)
        if part is None or result is None:
            return None
        result = _product(result, part)
    return result


def _score(factor: set[str] | None) -> int:
    if not factor or "" in factor:
        return -1
    return min(len(s) for s in factor) * 4 - len(factor) // 8


def _folds_alone(arg: tuple) -> bool:
    """A scoped ``(?i:…)`` group inside a case-sensitive pattern: its literals match in any
    case, which a case-sensitive gate cannot say (such a group gives no factor)."""
    return not _FOLD[0] and bool(arg[1] & re.IGNORECASE)


def _required_node(node: tuple) -> set[str] | None:
    op, arg = node
    if op is sre.SUBPATTERN:
        return None if _folds_alone(arg) else _required_seq(arg[-1])
    if op is sre.BRANCH:
        out: set[str] = set()
        for branch in arg[1]:
            part = _required_seq(branch)
            if part is None:
                return None
            out |= part
        return out if len(out) <= _MAX_SET else None
    if op in _REPEATS and arg[0] >= 1:
        return _required_seq(arg[2])
    if op is getattr(sre, "ATOMIC_GROUP", None):
        return _required_seq(arg)
    exact = _exact(node)
    return exact if exact and "" not in exact else None


def _candidates(seq, parts: bool = False) -> Iterator[set[str] | None]:  # noqa: ANN001 - sre SubPattern
    """The factor sets a match of the sequence ``seq`` must hold, in order: each run of exact
    nodes joined (while the product stays small), each other node's required set, and with
    ``parts`` every exact node alone too (a longer run may be given up later)."""
    run: set[str] | None = {""}
    for node in seq:
        part = _exact(node)
        if part is not None and run is not None:
            if parts:
                yield part
            joined = _product(run, part)
            if joined is not None:
                run = joined
                continue
            yield run
            run = part
            continue
        yield run
        run = {""}
        yield _required_node(node)
    yield run


def _required_seq(seq) -> set[str] | None:  # noqa: ANN001 - sre SubPattern
    best: set[str] | None = None
    for candidate in _candidates(seq):
        if _score(candidate) > _score(best):
            best = candidate
    return best if _score(best) >= 0 else None


def _conditions_seq(seq) -> list[set[str]]:  # noqa: ANN001 - sre SubPattern
    """Every factor set of a sequence that a match must satisfy (a conjunction)."""
    if len(seq) == 1 and seq[0][0] is sre.SUBPATTERN:
        return [] if _folds_alone(seq[0][1]) else _conditions_seq(seq[0][1][-1])
    out: list[set[str]] = []
    for candidate in _candidates(seq, parts=True):
        if candidate is not None and "" not in candidate:
            candidate = set(_minimal(candidate))  # scored as the gate will use it
        if _score(candidate) >= 0 and candidate is not None:
            out.append(candidate)
    return out


def _minimal(strings: set[str]) -> frozenset[str]:
    """``strings`` without those containing another one (the same "contains one of" test)."""
    out: list[str] = []
    for s in sorted(strings, key=len):
        if not any(o in s for o in out):
            out.append(s)
    return frozenset(out)


def conditions(pattern: re.Pattern[str]) -> tuple[bool, list[frozenset[str]]] | None:
    """Factor sets a match of ``pattern`` satisfies all at once.

    Returns:
        ``(folded, sets)``: every match lies in a text that, for each set, contains one of its
        strings — in the text's ``casefold()`` when ``folded`` (a case-insensitive pattern),
        else in the text as it is. ``None`` when nothing is known.
    """
    _FOLD[0] = bool(pattern.flags & re.IGNORECASE)
    try:
        tree = sre.parse(pattern.pattern, pattern.flags & ~re.UNICODE)
        found = _conditions_seq(tree)
    except Exception:  # noqa: BLE001 - an unparsable pattern gets no gate
        return None
    finally:
        folded, _FOLD[0] = _FOLD[0], True
    sets = [_minimal(s) for s in found]
    return (folded, sets) if sets else None


def required(pattern: re.Pattern[str] | str) -> frozenset[str] | None:
    """Case-folded strings one of which every match of ``pattern`` contains, or ``None``.

    A match of the pattern (with or without ``re.IGNORECASE``) in a text means the text's
    ``casefold()`` contains one of the returned strings. ``None`` says nothing is known
    (the pattern must be run on every text).
    """
    source = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    flags = pattern.flags if isinstance(pattern, re.Pattern) else re.IGNORECASE
    try:
        tree = sre.parse(source, flags & ~re.UNICODE)
    except Exception:  # noqa: BLE001 - an unparsable pattern gets no gate
        return None
    found = _required_seq(tree)
    return _minimal(found) if found else None


def _in_run(char: str, extra: str) -> bool:
    return char.isalnum() or char == "_" or char in extra


def _class_inside(items: list, extra: str) -> bool:
    """Every character the class ``items`` (an ``IN`` node's list) matches is a word character
    (``\\w``, any script) or one of ``extra``."""
    for op, arg in items:
        if op is sre.LITERAL:
            if not _in_run(chr(arg), extra):
                return False
        elif op is sre.RANGE:
            if not all(_in_run(chr(c), extra) for c in range(arg[0], arg[1] + 1)):
                return False
        elif op is sre.CATEGORY:
            if arg not in (sre.CATEGORY_DIGIT, sre.CATEGORY_WORD, getattr(sre, "CATEGORY_UNI_DIGIT", None),
                           getattr(sre, "CATEGORY_UNI_WORD", None)):
                return False
        else:  # NEGATE and the like
            return False
    return True


#: The characters of a "token run" besides word characters (any script): ``-+/=.\\``. A
#: secret value of the detectors is a run of these; prose is made of short ones.
WORD_RUN = "-+/=.\\"


def _run_seq(seq, extra: str) -> int:  # noqa: ANN001 - sre SubPattern
    best = 0
    for node in seq:
        op, arg = node
        if op in _REPEATS and arg[0] >= 1:
            inner = list(arg[2])
            if len(inner) == 1 and inner[0][0] is sre.IN and _class_inside(inner[0][1], extra):
                best = max(best, arg[0])
            else:
                best = max(best, _run_seq(arg[2], extra))
        elif op is sre.SUBPATTERN:
            best = max(best, _run_seq(arg[-1], extra))
        elif op is sre.BRANCH:
            best = max(best, min(_run_seq(b, extra) for b in arg[1]) if arg[1] else 0)
    return best


def required_run(pattern: re.Pattern[str], extra: str = WORD_RUN) -> int:
    """The length of a run of word characters and ``extra`` (default :data:`WORD_RUN`) every
    match of ``pattern`` holds (0 when none is known): ``[a-f0-9]{48}`` gives 48. A text
    whose longest such run is shorter cannot match."""
    try:
        tree = sre.parse(pattern.pattern, pattern.flags & ~re.UNICODE)
    except Exception:  # noqa: BLE001
        return 0
    return _run_seq(tree, extra)
