"""Governed memory (seed 000 §2 rule 7, §7.4b): knowledge reaches the shared tree through proposals,
only its owner activates it, active versions are immutable, and every change is recorded.

Rooms of this package, lowest first:

- :mod:`~memtui.core.governance.model`: versions, uses, pins and the ledger that reads them;
- :mod:`~memtui.core.governance.counters`: the distinct counters of an entry (occurrences, verified reuses, clean executions);
- :mod:`~memtui.core.governance.rules`: ownership, eligibility (two independent uses), what blocks a publication;
- :mod:`~memtui.core.governance.intents`: a publication as one guarded write of article, node index and store;
- :mod:`~memtui.core.governance.actions`: propose, use, assign, approve, reject, retire, roll back, adopt, revert;
- :mod:`~memtui.core.governance.inbox`: proposals dropped as files into ``proposals/inbox/``.

This face re-exports the public names, so callers write ``from memtui.core import governance as gov``.
"""

from __future__ import annotations

from memtui.core.governance.model import (  # noqa: F401 - the package's public face
    Check as Check,
    Contest as Contest,
    MARKS as MARKS,
    T_CHECKS as T_CHECKS,
    T_CONTESTS as T_CONTESTS,
    contest_record as contest_record,
    Eligibility as Eligibility,
    GovernanceError as GovernanceError,
    Ledger as Ledger,
    NeedsReview as NeedsReview,
    ORIGINS as ORIGINS,
    RefusedError as RefusedError,
    STATES as STATES,
    T_ASSIGN as T_ASSIGN,
    T_PINS as T_PINS,
    T_USES as T_USES,
    T_VERSIONS as T_VERSIONS,
    Use as Use,
    VERDICTS as VERDICTS,
    Version as Version,
    Versions as Versions,
    node_of as node_of,
    normalise_article as normalise_article,
    now as now,
    retired_how as retired_how,
    title_and_line as title_and_line,
)
from memtui.core.governance.counters import (  # noqa: F401 - the package's public face
    Counters as Counters,
    EXECUTIONS as EXECUTIONS,
    T_OCCURRENCES as T_OCCURRENCES,
    counters as counters,
    occurred as occurred,
    origin_of as origin_of,
)
from memtui.core.governance.rules import (  # noqa: F401 - the package's public face
    audit_findings as audit_findings,
    eligibility as eligibility,
    entry_states as entry_states,
    owner_of as owner_of,
    require_owner as require_owner,
    stale_base as stale_base,
    untracked as untracked,
)
from memtui.core.governance.intents import (  # noqa: F401 - the package's public face
    activation as activation,
    apply_plan as apply_plan,
    plan_files as plan_files,
)
from memtui.core.governance import gate as gate  # noqa: F401 - the package's public face
from memtui.core.governance.gate import (  # noqa: F401 - the package's public face
    Evaluation as Evaluation,
    RegressionRefused as RegressionRefused,
)
from memtui.core.governance.actions import (  # noqa: F401 - the package's public face
    evaluate_change as evaluate_change,
    adopt as adopt,
    approve as approve,
    assign as assign,
    check_approval as check_approval,
    check_rollback as check_rollback,
    propose as propose,
    propose_in as propose_in,
    refresh_search as refresh_search,
    reject as reject,
    retire as retire,
    revert as revert,
    rollback as rollback,
    touched_paths as touched_paths,
    use as use,
)
from memtui.core.governance.inbox import (  # noqa: F401 - the package's public face
    INBOX as INBOX,
    INBOX_FIELDS as INBOX_FIELDS,
    article_from_inbox as article_from_inbox,
    ingest as ingest,
)
