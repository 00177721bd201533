"""Making many objects at once: Python's cyclic garbage collector paused meanwhile.

A whole remote graph is decoded and made into records in one go: half a million new
containers, none in a cycle. Each collector pass walks every container that survived the last
one, so the passes grow with the graph, and on a 50,000-entity graph they took about two thirds
of the time of making it (bench/remote_graph.py).
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def bulk() -> Iterator[None]:
    """Pause the cyclic collector for the ``with`` block; it is enabled again after (if it was).
    Wrap only the making (decoding, building), never a wait: the pause is process-wide."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
