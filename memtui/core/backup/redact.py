"""Secrets left out of the backup tree (DESIGN.md §4 invariant 8).

The proxy of seed 002 writes the member's graph token into the workspace's ``config.json``, as the
``Authorization`` header of the ``memory`` MCP server block. The backup copies every workspace
file byte for byte, so that header would land in the backup repository, where no secret may be;
a detector (the backup refusal) only catches tokens it recognises, and a signed token of
the proxy's kind is not one of them. So the render leaves the value of every ``Authorization`` and
``Proxy-Authorization`` key of ``config.json`` out, whatever the token looks like, and writes
:data:`memtui.core.secrets.LEFT_OUT` in its place (a sentence saying so and how to put the token
back); everything else of the file is kept byte for byte.

The redaction is idempotent (a value that is already the marker is left as it is and still
counted), so ``render(restore(render(W))) == render(W)`` (invariant 9) holds, and a restore or a
verify can say which files had a secret left out (:func:`left_out`).

How: each ``"authorization": "…"`` pair of the file's text (any case, any spacing) has its value
string replaced in place. When the file is JSON, the result is parsed to check that no such key
kept a value (a key or value written with escapes the text pass does not follow); if one did, the
file is written again from its parsed form, with the values replaced (its bytes then change
beyond the value, and the secret is still left out).
"""

from __future__ import annotations

import json
import re

from memtui.core.secrets import LEFT_OUT

#: Keys whose values are secrets (compared case-insensitively).
KEYS = ("authorization", "proxy-authorization")

_MARKER_JSON = json.dumps(LEFT_OUT, ensure_ascii=False)
_PAIR = re.compile(r'("(?:proxy-)?authorization"\s*:\s*)"((?:[^"\\]|\\.)*)"', re.IGNORECASE)


def redact(rel: bytes, data: bytes) -> tuple[bytes, int]:
    """``data`` of the workspace file ``rel`` with its secret values left out.

    Args:
        rel: the workspace-relative path (only :func:`files` are changed).
        data: the file's bytes.

    Returns:
        ``(bytes, count)``: the bytes to back up and how many values are left out (the ones
        already left out by an earlier backup included); ``(data, 0)`` for other files.
    """
    if rel not in files():
        return data, 0
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
    count = 0

    def replace(match: re.Match) -> str:
        nonlocal count
        count += 1
        return match.group(1) + _MARKER_JSON

    out = _PAIR.sub(replace, text)
    try:
        parsed = json.loads(out.lstrip("\ufeff"))
    except ValueError:
        parsed = None
    if parsed is not None and _secrets(parsed):
        count = _replace(parsed)
        out = json.dumps(parsed, ensure_ascii=False, indent=2) + "\n"
    return out.encode("utf-8", "surrogateescape"), count


def left_out(rel: bytes, data: bytes) -> int:
    """How many secret values of the backed-up file ``rel`` are the marker (0 for other files)."""
    if rel not in files():
        return 0
    return data.decode("utf-8", "replace").count(_MARKER_JSON)


def files() -> tuple[bytes, ...]:
    """The workspace-relative paths whose secret values are left out: the workspace's
    ``config.json`` (:data:`memtui.core.graph.remote.WORKSPACE_CONFIG`, imported on first use so a
    render loads no HTTP client)."""
    from memtui.core.graph.remote import WORKSPACE_CONFIG

    return (WORKSPACE_CONFIG.encode("ascii"),)


def _secrets(value: object) -> bool:
    """True when a secret key of ``value`` (parsed JSON) holds anything but the marker."""
    if isinstance(value, dict):
        return any((k.lower() in KEYS and v != LEFT_OUT) or _secrets(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_secrets(v) for v in value)
    return False


def _replace(value: object) -> int:
    count = 0
    if isinstance(value, dict):
        for key in value:
            if key.lower() in KEYS:
                value[key] = LEFT_OUT
                count += 1
            else:
                count += _replace(value[key])
    elif isinstance(value, list):
        for item in value:
            count += _replace(item)
    return count
