"""Skills (seed 002, the Agent Skills rules): :mod:`~memtui.core.skills.model` (a skill, the
catalogue), :mod:`~memtui.core.skills.rules` (reading and checking one ``SKILL.md``),
:mod:`~memtui.core.skills.catalogue` (which skills an agent gets), :mod:`~memtui.core.skills.index`
(the bounded index a turn gets) and :mod:`~memtui.core.skills.edit` (minimal, guarded edits).

This face re-exports the public names.
"""

from __future__ import annotations

from memtui.core.skills.model import (  # noqa: F401 - the package's public face
    AGENT_ROOT as AGENT_ROOT,
    ALLOWED_KEYS as ALLOWED_KEYS,
    CASCADE_DIR as CASCADE_DIR,
    Catalogue as Catalogue,
    DEFAULT_INDEX_BUDGET as DEFAULT_INDEX_BUDGET,
    MAX_COMPATIBILITY as MAX_COMPATIBILITY,
    MAX_DESCRIPTION as MAX_DESCRIPTION,
    MAX_NAME as MAX_NAME,
    RESERVED_NAMES as RESERVED_NAMES,
    SCOPES as SCOPES,
    SHARED_ROOT as SHARED_ROOT,
    SKILL_FILE as SKILL_FILE,
    Skill as Skill,
    UPLOAD_PATTERN as UPLOAD_PATTERN,
)
from memtui.core.skills.rules import (  # noqa: F401 - the package's public face
    check_name as check_name,
    parse_skill as parse_skill,
)
from memtui.core.skills.catalogue import (  # noqa: F401 - the package's public face
    audit_findings as audit_findings,
    load_catalogue as load_catalogue,
    load_folder as load_folder,
    scan_root as scan_root,
)
from memtui.core.skills.index import (  # noqa: F401 - the package's public face
    SkillIndex as SkillIndex,
    build_index as build_index,
    index_line as index_line,
)
from memtui.core.skills.edit import (  # noqa: F401 - the package's public face
    save_skill_field as save_skill_field,
    save_skill_text as save_skill_text,
    set_front_matter_field as set_front_matter_field,
    yaml_scalar as yaml_scalar,
)
