"""Headless subcommands of ``memtui``.

Every module here (not starting with ``_``) defines ``register(subparsers)``, which adds its
subcommand(s) to the CLI's parser and sets ``func`` to a callable ``(args) -> int`` (an
:class:`memtui.commands._common.ExitCode`). ``memtui.cli`` discovers the modules, so adding a
command is adding a file.
"""
