"""Plain-text display helpers shared by the CLI and core messages (no Textual, no Rich)."""

from __future__ import annotations

import unicodedata


def visible(text: str) -> str:
    """``text`` with control, zero-width, direction and surrogate characters shown as escapes.

    ``"line one\\nline two"`` keeps its two words on one line as ``line one\\\\nline two``; a
    zero-width space becomes ``\\u200b``; a right-to-left override ``\\u202e``; a lone
    surrogate from a non-UTF-8 file name ``\\udcff``. So a name never breaks a one-line output
    and two different names never look the same (B17).
    """
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)
