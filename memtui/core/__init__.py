"""The domain of memtui, usable and tested without a terminal.

Nothing in this package imports Textual or Rich (``tests/test_layers.py`` enforces it).
"""
