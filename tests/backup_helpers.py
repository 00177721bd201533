"""Helpers shared by the backup tests: an isolated git, workspaces with a store."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from memtui.core.session import Session

from tests.conftest import run_cli

IDENTITY = ("Backup Tester", "backup-tester@example.invalid")


def isolate_git(monkeypatch: pytest.MonkeyPatch, home: Path, identity: tuple[str, str] | None = IDENTITY) -> None:
    """Point git at an empty home with only ``identity`` configured (no system config)."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / ".gitconfig"
    text = "[init]\n\tdefaultBranch = master\n[advice]\n\tdetachedHead = false\n"
    if identity:
        text += f"[user]\n\tname = {identity[0]}\n\temail = {identity[1]}\n"
    config.write_text(text)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL",
                 "MEMTUI_GIT_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def git(cwd: Path, *args: str | bytes, check: bool = True) -> bytes:
    """Run plain git in ``cwd``; return stdout bytes."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {args} failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def fill_store(ws_root: Path, tables: dict[str, list[dict[str, Any]]], audit: int = 0) -> None:
    """Insert records into the workspace's store through a writer Session, plus ``audit`` entries."""
    from memtui.core.store import Store

    with Session.open(ws_root, purpose="test") as session:
        session.require_writable()
        store: Store = session.store
        store.begin()
        for name, records in tables.items():
            table = store.table(name)
            for record in records:
                table.insert(record)
            if not records:  # an empty table still exists in the file
                table.insert({})
                table.truncate()
        for i in range(audit):
            session.audit.append("notes.set", "memory/MEMORY_CUSTOM.md", None, f"{i:064x}",
                                 detail={"bytes": i, "ratio": i / 7, "ok": i % 2 == 0})
        store.commit()


def tree_bytes(root: Path) -> dict[bytes, bytes]:
    """Every regular file under ``root`` as {relative path: bytes}; of ``.memtui/`` only the store."""
    out = {}
    root_b = os.fsencode(root)
    for folder, _dirs, files in os.walk(root_b):
        rel_folder = os.path.relpath(folder, root_b)
        if rel_folder.split(b"/")[0] == b".memtui" and rel_folder != b".memtui":
            continue
        for name in files:
            rel = os.path.normpath(os.path.join(rel_folder, name))
            if rel.startswith(b".memtui/") and rel != b".memtui/store.json":  # lock, holder, index
                continue
            with open(os.path.join(folder, name), "rb") as handle:
                out[rel] = handle.read()
    return out


run = run_cli  # the backup tests' name for it


def behind_remote(tmp_path: Path) -> Path:
    """A new repository whose ``origin`` (a bare repository) holds a commit it lacks, so a push
    from it is rejected as not a fast-forward."""
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    (other / "x").write_text("x\n")
    git(other, "add", "x")
    git(other, "commit", "-qm", "x")
    git(other, "push", "-q", "origin", "master")
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "remote", "add", "origin", str(bare))
    return repo


@contextlib.contextmanager
def git_http_server(root: Path) -> Iterator[str]:
    """Serve the bare repositories under ``root`` over smart HTTP (``git http-backend``, anonymous
    pushes allowed): a remote whose hooks run on the server's side, as a hosting service's do.
    (memtui runs no hook of a repository on this machine, a local remote's included.) Yields the
    base URL (``http://127.0.0.1:PORT``)."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def _cgi(self) -> None:
            path, _, query = self.path.partition("?")
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                body = b""
                while True:
                    size = int(self.rfile.readline().strip(), 16)
                    chunk = self.rfile.read(size + 2)[:size]
                    if not size:
                        break
                    body += chunk
            else:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            env = {**os.environ, "GIT_PROJECT_ROOT": str(root), "GIT_HTTP_EXPORT_ALL": "1",
                   "REQUEST_METHOD": self.command, "PATH_INFO": path, "QUERY_STRING": query,
                   "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
                   "REMOTE_USER": "tester", "REMOTE_ADDR": "127.0.0.1",
                   "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                   "GIT_PROTOCOL": self.headers.get("Git-Protocol", "")}
            done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
            head, _, payload = done.stdout.partition(b"\r\n\r\n")
            status = 200
            headers = []
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.strip().split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _cgi

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
