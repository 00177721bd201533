"""Run git on a repository that is data: no program the repository names ever runs.

DESIGN.md §4 invariant 12. A backup repository may come from a colleague, a restore or a USB
stick; its ``.git/config`` (and any file that config includes), its hooks and its attributes
are the repository's, not the user's. Every git process memtui starts is started here, by
:func:`run` or :func:`popen`, which both take their command line and environment from
:func:`command` (a test fails when any other module starts git).

What :func:`command` sets, and why each holds for its whole class:

- **Always off**, as command-line configuration (``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``,
  which outranks every config file, is inherited by the git processes git itself starts, and
  carries any key name exactly): hooks (``core.hooksPath`` → the null device, so neither
  ``.git/hooks`` nor a hooks folder the repository names is looked at), ``core.fsmonitor``,
  pagers and editors (``--no-pager``, ``GIT_PAGER``, ``GIT_EDITOR=:``), signing and signature
  checks (``commit.gpgSign``, ``push.gpgSign``, ``tag.gpgSign``, ``log.showSignature``: memtui
  never signs, so no ``gpg.*program`` runs), submodule recursion, background gc and
  maintenance; transports other than file, git, ssh, http and https (``protocol.allow=never``,
  and ``never`` for every ``protocol.<name>.allow`` the config lists: no ``ext::`` command and
  no remote helper a URL names — ``GIT_ALLOW_PROTOCOL`` in your environment still decides).
- **Every filter the configuration defines** (any scope: ``filter.<name>.clean``, ``smudge``,
  ``process`` emptied and ``required`` false): a filter runs only when a config names its
  command, and which names a repository binds through ``.gitattributes`` or
  ``info/attributes`` memtui cannot vet, so none runs; backups are bytes (the backup tree
  carries ``-filter`` too). Diff drivers and ``diff.external`` never run because memtui
  produces no patch and passes ``--no-ext-diff --no-textconv`` where it diffs; it never merges.
- **Programs only you may name**: ``core.sshCommand``, ``core.askPass``, ``core.gitProxy`` and
  the credential helpers are taken from your own (global or system) configuration or your
  environment; a value the repository's own config sets (``local``/``worktree`` scope,
  included files too) is overridden by yours, else by git's default (``ssh``, no askpass, no
  proxy, no helper). So pushing with your own credential helper keeps working.
- ``GIT_TERMINAL_PROMPT=0``: git never waits for a person; ``GIT_OPTIONAL_LOCKS=0``: a status
  never rewrites the index.

A push to a repository on this machine (a path or ``file://``) runs that repository's
``git receive-pack`` here, with *its* config and hooks, and git does not pass our configuration
to it; :func:`receive_pack` gives the command that starts it with the same overrides (for other
transports, git's standard ``git-receive-pack``, whatever ``remote.<name>.receivepack`` says).

The repository's configuration is listed once per repository object (``git config --list
--show-scope``, includes followed, as git itself reads them) by :func:`overrides`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: Given on every git command line before the command (DESIGN.md invariant 12).
OPTIONS = ("--no-pager", "-c", "core.quotepath=false", "-c", "core.autocrlf=false", "-c", "core.safecrlf=false",
           "-c", "core.precomposeunicode=false", "-c", "advice.detachedHead=false", "--literal-pathspecs")

#: The transports memtui lets git use (everything else needs ``GIT_ALLOW_PROTOCOL``).
PROTOCOLS = ("file", "git", "ssh", "http", "https")

#: Configuration every git process gets, whatever any config file says.
FIXED: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("gc.auto", "0"),
    ("gc.autoDetach", "false"),
    ("maintenance.auto", "false"),
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "always") for name in PROTOCOLS),
)

#: Keys naming a program that only your own config may set: key → git's default when the
#: repository sets it and you do not.
YOURS_ONLY: dict[str, str] = {"core.sshcommand": "ssh", "core.askpass": ""}

#: Environment every git process gets.
ENVIRONMENT = {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_EDITOR": ":", "GIT_SEQUENCE_EDITOR": ":",
               "GIT_OPTIONAL_LOCKS": "0", "LANGUAGE": "C", "LC_ALL": "C"}

#: Scopes that are the repository's own (its ``.git/config``, ``config.worktree``, and what they include).
REPOSITORY_SCOPES = ("local", "worktree")


@dataclass(frozen=True, slots=True)
class Entry:
    """One configuration line as git reads it: ``scope`` (system, global, local, worktree,
    command), ``key`` (section and name lower case, the subsection as written), ``value``."""

    scope: str
    key: str
    value: str | None


def parse_listing(data: bytes) -> list[Entry]:
    """Parse ``git config --list --show-scope -z`` output (``scope NUL key LF value NUL`` …)."""
    parts = data.split(b"\0")
    entries = []
    for i in range(0, len(parts) - 1, 2):
        scope = parts[i].decode("utf-8", "replace")
        key, newline, value = parts[i + 1].partition(b"\n")
        entries.append(Entry(scope, key.decode("utf-8", "surrogateescape"),
                             value.decode("utf-8", "surrogateescape") if newline else None))
    return entries


def _split(key: str) -> tuple[str, str | None, str]:
    """``section.sub.section.name`` → ``(section, subsection or None, name)``."""
    section, _, rest = key.partition(".")
    sub, dot, name = rest.rpartition(".")
    return section.lower(), (sub if dot else None), name.lower()


def overrides(entries: Iterable[Entry], *, no_credential_helper: bool = False) -> list[tuple[str, str]]:
    """The configuration that keeps ``entries`` (a repository's listing) from running anything.

    Args:
        entries: :func:`parse_listing` of the repository (``[]`` outside any repository).
        no_credential_helper: drop every credential helper, yours too (memtui hands git its
            own token for this one command).

    Returns:
        ``(key, value)`` pairs, in the order git must apply them (later wins).
    """
    entries = list(entries)
    pairs: list[tuple[str, str]] = list(FIXED)
    filters: dict[str, None] = {}
    protocols: dict[str, None] = {}
    for entry in entries:
        section, sub, name = _split(entry.key)
        if section == "filter" and sub is not None:
            filters[sub] = None
        elif section == "protocol" and sub is not None and name == "allow" and sub.lower() not in PROTOCOLS:
            protocols[sub] = None
    for sub in filters:
        pairs += [(f"filter.{sub}.clean", ""), (f"filter.{sub}.smudge", ""), (f"filter.{sub}.process", ""),
                  (f"filter.{sub}.required", "false")]
    pairs += [(f"protocol.{sub}.allow", "never") for sub in protocols]
    theirs = [e for e in entries if e.scope in REPOSITORY_SCOPES]
    for key, default in YOURS_ONLY.items():
        if any(e.key.lower() == key for e in theirs):
            yours = [e.value for e in entries if e.key.lower() == key and e.scope not in REPOSITORY_SCOPES]
            pairs.append((key, yours[-1] if yours and yours[-1] is not None else default))

    def helper(entry: Entry) -> bool:
        section, _sub, name = _split(entry.key)
        return section == "credential" and name == "helper"

    if no_credential_helper or any(helper(e) for e in theirs):
        pairs.append(("credential.helper", ""))  # an empty helper empties the list (gitcredentials(7))
        if not no_credential_helper:  # yours again, in their order, after the reset
            pairs += [(e.key, e.value or "") for e in entries if helper(e) and e.scope not in REPOSITORY_SCOPES]
    return pairs


def environment(pairs: Iterable[tuple[str, str]], entries: Iterable[Entry] = (),
                extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a git process: ``base`` (default ``os.environ``), the fixed
    variables, ``pairs`` as ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` after any the caller's
    environment already holds, then ``extra``.

    ``GIT_PROXY_COMMAND`` is set empty when the repository's own config names a
    ``core.gitProxy`` and your environment names none (the first ``gitProxy`` line git reads
    wins, so no configuration can override the repository's)."""
    env = dict(os.environ if base is None else base)
    env.update(ENVIRONMENT)
    try:
        count = max(int(env.get("GIT_CONFIG_COUNT", "0")), 0)
    except ValueError:
        count = 0
    for key, value in pairs:
        env[f"GIT_CONFIG_KEY_{count}"] = key
        env[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)
    if "GIT_PROXY_COMMAND" not in env and any(e.key.lower() == "core.gitproxy" and e.scope in REPOSITORY_SCOPES
                                              for e in entries):
        env["GIT_PROXY_COMMAND"] = ""
    if extra:
        env.update(extra)
    return env


def command(args: Iterable[str | bytes], pairs: Iterable[tuple[str, str]], entries: Iterable[Entry] = (),
            extra: Mapping[str, str] | None = None) -> tuple[list[str | bytes], dict[str, str]]:
    """``(argv, env)`` of ``git <OPTIONS> <args>`` with the safe configuration ``pairs``
    (:func:`overrides`): the one place a git command line is made."""
    entries = list(entries)
    return ["git", *OPTIONS, *args], environment(pairs, entries, extra)


def run(cwd: str | os.PathLike[str], args: Iterable[str | bytes], pairs: Iterable[tuple[str, str]],
        entries: Iterable[Entry] = (), *, extra: Mapping[str, str] | None = None,
        stdin: IO[bytes] | None = None) -> tuple[int, bytes, bytes]:
    """Run git (see :func:`command`) in ``cwd``: ``(status, stdout, stderr)``.

    Raises:
        FileNotFoundError: git is not installed.
    """
    argv, env = command(args, pairs, entries, extra)
    done = subprocess.run(argv, cwd=cwd, env=env, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, check=False)
    return done.returncode, done.stdout, done.stderr


def popen(cwd: str | os.PathLike[str], args: Iterable[str | bytes], pairs: Iterable[tuple[str, str]],
          entries: Iterable[Entry] = (), *, stdin: Any = None) -> subprocess.Popen:
    """Start git (see :func:`command`) in ``cwd`` with its output as a stream (``stdout`` a
    pipe, ``stderr`` a temporary file: a full pipe cannot stall it).

    Raises:
        FileNotFoundError: git is not installed.
    """
    argv, env = command(args, pairs, entries)
    return subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=tempfile.TemporaryFile())


def listing(cwd: str | os.PathLike[str]) -> tuple[int, list[Entry], bytes]:
    """The configuration git reads in ``cwd`` (every scope, includes followed):
    ``(status, entries, stderr)``; read with the fixed overrides only (reading runs nothing)."""
    status, out, err = run(cwd, ["config", "--list", "--show-scope", "-z"], FIXED)
    return status, (parse_listing(out) if status == 0 else []), err


def outside() -> Path:
    """A new empty folder under no repository, where git reads your config only (remove it
    after use)."""
    return Path(tempfile.mkdtemp(prefix="memtui-git-"))


def is_local_url(url: str) -> bool:
    """True for a remote git reaches on this machine (a path or ``file://``), the transport in
    which git starts the remote's ``receive-pack`` here."""
    if url.startswith("file://"):
        return True
    if "://" in url or "::" in url:
        return False
    head = url.split("/", 1)[0]
    return ":" not in head  # ``host:path`` is ssh


def receive_pack(url: str, base: str | os.PathLike[str] = ".") -> tuple[str, dict[str, str]]:
    """``(--receive-pack value, environment)`` for a push to ``url`` (a relative path is relative
    to ``base``, the pushing repository's top folder, as git takes it).

    For a repository on this machine, ``git … receive-pack`` with the overrides of *that*
    repository's configuration (``--config-env`` names environment variables, so a key holding
    ``=`` stays whole and no value is quoted twice); elsewhere git's standard
    ``git-receive-pack`` (the remote's own business runs on the remote's machine).
    """
    if not is_local_url(url):
        return "git-receive-pack", {}
    where = os.path.join(base, url[len("file://"):] if url.startswith("file://") else url)
    entries: list[Entry] = []
    if os.path.isdir(where):
        status, found, _ = listing(where)
        entries = found if status == 0 else []
    pairs = overrides(entries) + [("core.alternateRefsCommand", "true")]
    env: dict[str, str] = {}
    words = ["git"]
    for i, (key, value) in enumerate(pairs):
        env[f"MEMTUI_GIT_RP_{i}"] = value
        words.append(shlex.quote(f"--config-env={key}=MEMTUI_GIT_RP_{i}"))
    words.append("receive-pack")
    return " ".join(words), env


__all__ = ["Entry", "FIXED", "OPTIONS", "command", "environment", "is_local_url", "listing", "outside",
           "overrides", "parse_listing", "popen", "receive_pack", "run"]
