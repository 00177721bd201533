"""The consolidation pass and its actions (seed 000 §4 step 5, §7.3, §7.4b).

- :mod:`~memtui.core.consolidate.duplicates`: near-duplicate articles (MinHash/LSH, names);
- :mod:`~memtui.core.consolidate.stale`: the staleness rule;
- :mod:`~memtui.core.consolidate.scan`: the pass, candidates by node and owner;
- :mod:`~memtui.core.consolidate.actions`: merge, contest, resolve, re-verify, refresh a
  one-liner (each one governed write, owner only);
- :mod:`~memtui.core.consolidate.pins`: what a case relied on, and who relied on a version.

Callers write ``from memtui.core import consolidate``.
"""

from __future__ import annotations

from memtui.core.consolidate.scan import (  # noqa: F401 - the package's public face
    Candidate as Candidate,
    KINDS as KINDS,
    Report as Report,
    scan as scan,
)
from memtui.core.consolidate.actions import (  # noqa: F401 - the package's public face
    check_owner as check_owner,
    contest as contest,
    merge as merge,
    merge_content as merge_content,
    evaluate_refresh as evaluate_refresh,
    refresh_line as refresh_line,
    resolve as resolve,
    reverify as reverify,
    undo_refresh_line as undo_refresh_line,
)
from memtui.core.consolidate.pins import (  # noqa: F401 - the package's public face
    Pinned as Pinned,
    case_pins as case_pins,
    version_pins as version_pins,
)
