"""The areas of the TUI, one screen each (see :mod:`memtui.ui.areas`)."""
