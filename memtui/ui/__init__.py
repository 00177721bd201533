"""The Textual TUI of memtui: one screen per area over ``memtui.core``."""
