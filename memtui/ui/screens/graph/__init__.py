"""The Graph area: browse, audit and curate the knowledge graph, local or remote.

A package of panes that talk by Textual messages (:mod:`.messages`), each testable alone:

- :mod:`.screen`: :class:`~.screen.GraphScreen`, which reads the graph (and its kept snapshot)
  in workers, saves confirmed edits through the graph backend, and wires the panes together;
- :mod:`.model`: :class:`~.model.GraphModel`, what the panes show of one read (findings by
  line, marks, relations by entity), built once per read;
- :mod:`.table`: :class:`~.table.EntityTable`, the paged, sorted, filtered entity table;
- :mod:`.status`: :class:`~.status.ReadStatus`, the count line: what is shown, from where, and
  whether it is live, a kept read or offline;
- :mod:`.detail`: :class:`~.detail.EntityDetail`, the entity, its observations with their
  provenance, and its neighbourhood tree;
- :mod:`.curation`: :class:`~.curation.Curator` (the questions of every curating action, up
  to a confirmed edit), :class:`~.curation.EditHistory` (undo and redo) and
  :class:`~.curation.ConflictBar` (the difference when a save meets another writer's change).
"""
