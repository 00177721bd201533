"""The Whoosh analyzer of memtui's text fields: :mod:`memtui.core.search.analysis` behind
Whoosh's tokenizer protocol (the engine's side of analysis)."""

from __future__ import annotations

from whoosh.analysis import Token, Tokenizer

from memtui.core.search.analysis import COMPOUND, split_chunk, word_terms, normalize


class MemtuiAnalyzer(Tokenizer):
    """Whoosh analyzer wrapping :func:`terms` (tokeniser and filters in one step).

    Used for every text field of the index (:mod:`memtui.core.search.engine.index`); it is pickled
    into the index's table of contents, so its module path is part of the schema version.
    """

    def __init__(self, keys: bool = True, plain: bool = True):
        self.keys = keys
        self.plain = plain

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, MemtuiAnalyzer) and other.keys == self.keys
                and other.plain == self.plain)

    def __call__(self, value, positions=False, chars=False, keeporiginal=False,
                 removestops=True, start_pos=0, start_char=0, tokenize=True, mode="",
                 **kwargs):  # noqa: ANN001 - Whoosh's analyzer protocol
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if not tokenize:
            token.original = token.text = normalize(value)
            token.boost = 1.0
            if positions:
                token.pos = start_pos
            if chars:
                token.startchar = start_char
                token.endchar = start_char + len(value)
            yield token
            return
        # the same terms as :func:`terms`, without a Word object per word (index build speed)
        keys, plain = self.keys, self.plain
        pos = start_pos
        for m in COMPOUND.finditer(value):
            base = start_char + m.start()
            for piece, s, e, whole in split_chunk(m.group(0)):
                plain_term, key = word_terms(piece, whole)
                if plain_term is not None:
                    for term in ((plain_term if plain else None), (key if keys else None)):
                        if term is None:
                            continue
                        token.text = term
                        token.boost = 1.0
                        token.stopped = False
                        if keeporiginal:
                            token.original = piece
                        if positions:
                            token.pos = pos
                        if chars:
                            token.startchar = base + s
                            token.endchar = base + e
                        yield token
                if not whole:
                    pos += 1
