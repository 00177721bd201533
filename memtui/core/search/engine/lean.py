"""Whoosh imported without the modules a search never uses (an agent calls ``memtui
search`` in a fresh process and pays every import).

whoosh-reloaded 2.7.5 loads, at import time, three modules it needs only for features
memtui does not use:

- ``urllib.request`` (with ``http.client``, ``ssl`` and ``email``), for
  ``whoosh.compat.urlretrieve`` (never called by Whoosh's index or search code);
- the ``cached_property`` package, which imports ``asyncio``, for one property of
  ``whoosh.reading.MultiReader``;
- ``whoosh.lang.morph_en`` (a thousand lines of regular expressions compiled on import),
  for the ``Variations`` query.

While :func:`import_whoosh` imports Whoosh, those names stand for light stand-ins: a
function that loads the real ``urlretrieve`` (or ``variations``) on its first call, and the
``cached_property`` descriptor's own behaviour for a plain method (compute once, keep in the
instance's ``__dict__``). Afterwards the stand-ins are taken out of ``sys.modules``, so any
later import gets the real module. A name already imported is left as it is.

``sys.modules`` is shared by every thread: while another thread runs, it could import one of
those names meanwhile and be given the stand-in (in the TUI the first audit imports
detect-secrets, whose ``requests`` imports ``urllib.request``: the audit failed with "cannot
import name 'getproxies'"). So the stand-ins are placed only while the importing thread is
the process's only one (a command's search); otherwise Whoosh is imported as it is.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from typing import Any, Callable

#: The Whoosh modules the engine uses, imported together by :func:`import_whoosh`.
WHOOSH_MODULES = ("whoosh.fields", "whoosh.formats", "whoosh.index", "whoosh.scoring", "whoosh.query",
                  "whoosh.matching", "whoosh.codec.whoosh3", "whoosh.writing", "whoosh.reading",
                  "whoosh.util.numeric", "whoosh.analysis", "whoosh.collectors")


class cached_property:  # noqa: N801 - the name Whoosh imports
    """A property computed once per instance and then kept as a plain attribute (the
    ``cached_property`` package's behaviour for a method that is not a coroutine)."""

    def __init__(self, func: Callable[[Any], Any]) -> None:
        self.__doc__ = func.__doc__
        self.func = func

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.func.__name__] = self.func(obj)
        return value


def _deferred(module: str, name: str) -> Callable[..., Any]:
    """A function that imports ``module`` on its first call and calls its ``name``."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    call.__name__ = name
    call.__doc__ = f"``{module}.{name}``, imported when first called."
    return call


def _stand_ins() -> dict[str, types.ModuleType]:
    out: dict[str, types.ModuleType] = {}
    request = types.ModuleType("urllib.request", "stand-in while Whoosh is imported")
    request.urlretrieve = _deferred("urllib.request", "urlretrieve")  # type: ignore[attr-defined]
    out["urllib.request"] = request
    cached = types.ModuleType("cached_property", "stand-in while Whoosh is imported")
    cached.cached_property = cached_property  # type: ignore[attr-defined]
    out["cached_property"] = cached
    morph = types.ModuleType("whoosh.lang.morph_en", "stand-in while Whoosh is imported")
    morph.variations = _deferred("whoosh.lang.morph_en", "variations")  # type: ignore[attr-defined]
    out["whoosh.lang.morph_en"] = morph
    return out


def import_whoosh() -> None:
    """Import :data:`WHOOSH_MODULES` with the stand-ins in place when this is the process's
    only thread (once; a no-op when Whoosh is already imported)."""
    if "whoosh.searching" in sys.modules:
        return
    alone = threading.active_count() == 1  # no other thread can meet a stand-in (module docstring)
    placed = {name: module for name, module in _stand_ins().items() if name not in sys.modules} if alone else {}
    sys.modules.update(placed)
    try:
        for name in WHOOSH_MODULES:
            importlib.import_module(name)
    finally:
        for name, module in placed.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
