"""`python -m memtui` is the same as the `memtui` console script."""

from memtui.cli import main

raise SystemExit(main())
