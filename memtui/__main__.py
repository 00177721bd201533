"""`python -m memtui` is the same as the `memtui` console script."""

from memtui.cli import main

# Guarded, as multiprocessing's spawn start method asks of a main module.
if __name__ == "__main__":
    raise SystemExit(main())
