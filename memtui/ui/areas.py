"""The areas of the TUI: one screen each, switched with a number key or the command palette.

An area is added by one line here: ``Area(mode, title, key, "module:ScreenClass", help)``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Area:
    """One area: its mode name, title, switch key, screen class path and palette help."""

    mode: str
    title: str
    key: str
    screen: str
    help: str

    def load(self):
        """Import and return the screen class."""
        module, _, name = self.screen.partition(":")
        return getattr(importlib.import_module(module), name)


AREAS: list[Area] = [
    Area("tree", "Tree", "1", "memtui.ui.screens.tree:TreeScreen",
         "browse nodes, node indexes and articles of the memory tree"),
    Area("audit", "Audit", "2", "memtui.ui.screens.audit:AuditScreen",
         "every finding in a sortable, filterable table"),
    Area("skills", "Skills", "3", "memtui.ui.screens.skills:SkillsScreen",
         "the skills catalogue, each skill's findings and the skill index budget"),
    Area("notes", "Notes", "4", "memtui.ui.screens.notes:NotesScreen",
         "edit the member notes (MEMORY_CUSTOM.md) safely; read the notebook and operator files"),
    Area("graph", "Graph", "5", "memtui.ui.screens.graph.screen:GraphScreen",
         "entities, relations and findings of the knowledge graph; curate it"),
    Area("search", "Search", "6", "memtui.ui.screens.search:SearchScreen",
         "search every article, note, skill and entity; Enter opens the result in its area"),
    Area("proposals", "Proposals", "7", "memtui.ui.screens.proposals:ProposalsScreen",
         "review proposals (diff, provenance, uses), approve or reject; version history, rollback, retire"),
    Area("backup", "Backup", "8", "memtui.ui.screens.backup:BackupScreen",
         "back the workspace up to git, list the backups, restore one into a folder, verify the round trip"),
    Area("sessions", "Sessions", "9", "memtui.ui.screens.sessions:SessionsScreen",
         "the agents' session histories as turns; append-only checks; the graph facts a turn gave"),
    Area("consolidate", "Consolidate", "0", "memtui.ui.screens.consolidate:ConsolidateScreen",
         "the consolidation pass: merge duplicates, resolve contested, re-verify stale, refresh one-liners; pins"),
    Area("migrate", "Migrate", "M", "memtui.ui.screens.migrate:MigrateScreen",
         "migrate an inherited memory folder into a domain: each pass's state and report; run the next pass"),
]
