"""Backup to git, restore offline, and verify the round trip (seed 004).

- :mod:`.render`: the deterministic backup tree of a workspace (files byte for byte, the
  store as markdown, ``MANIFEST``), parsing it back, writing it into a folder;
- :mod:`.git`: the backup repository (the git command, through :mod:`.safegit`): head state, identity, committing only the
  backup path, push never forced, history, reading a commit's tree;
- :mod:`.commit`: :func:`backup`, the whole backup;
- :mod:`.restore`: :func:`restore` a commit into a folder, refusing unsafe entries;
- :mod:`.verify`: :func:`verify` the round trip render → restore → render, byte for byte.
"""

from memtui.core.backup.commit import BackupResult, backup, settings
from memtui.core.backup.git import BackupRefused, BackupRepo, GitError
from memtui.core.backup.render import BackupFormatError
from memtui.core.backup.restore import RestoreResult, restore
from memtui.core.backup.verify import VerifyResult, verify

__all__ = ["BackupFormatError", "BackupRefused", "BackupRepo", "BackupResult", "GitError", "RestoreResult",
           "VerifyResult", "backup", "restore", "settings", "verify"]
