"""memtui: a local-first terminal workbench for the memory of AI agents."""

__version__ = "0.1.0"
