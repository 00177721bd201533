"""A small, synchronous MCP client over streamable HTTP, on httpx (DESIGN.md §5).

What it speaks, from the MCP specification 2026-07-28 ("Streamable HTTP", "Backward
Compatibility"), and why it is memtui's own rather than the official SDK's (the closing
note has the measurements): memtui calls eight tools of one server, synchronously, from a CLI
and from worker threads; the SDK is asynchronous (anyio), brings its own HTTP client (httpx2)
with pydantic, starlette, uvicorn and cryptography, and adds half a second to every
``memtui graph`` start.

- **Era detection.** The client first sends ``server/discover`` with the per-request metadata
  of 2026-07-28 (``_meta`` with protocol version, client info and capabilities, and the
  ``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name`` headers). A result naming
  2026-07-28 makes the connection *modern*: every later request carries the same metadata and
  no session exists. Anything else that is not an authorisation failure or a network failure
  (a 400/404/405, a JSON-RPC error such as ``-32601``) falls back to the *legacy* handshake,
  as the specification's backward-compatibility rule and the reference SDK's ``mode='auto'``
  do: ``initialize`` (offering 2025-11-25), then ``notifications/initialized``; the server's
  ``Mcp-Session-Id`` and the negotiated ``MCP-Protocol-Version`` go on every later request.
- **Answers** are ``application/json`` or a ``text/event-stream`` (events parsed by
  ``httpx-sse``); request-related notifications before the answer are skipped; a stream that
  ends without the answer, or whose data is not JSON, is a :class:`McpServerError`.
- **Sessions.** A legacy session the server expired (HTTP 404 to a request carrying the session
  id) is re-initialised once and the request sent again; :meth:`Client.close` ends the session
  with ``DELETE``.
- **Failures** are sentences (:mod:`memtui.core.mcp.errors`, exit 4): no route (HTTP 404 on the
  first contact: seed 002's proxy registers ``/v1/mcp`` only when its token secret is set),
  401/403 (naming the key to set), a timeout (no byte for :attr:`Endpoint.timeout` seconds),
  5xx, a malformed stream, a missing tool (:meth:`Client.require`).

The bearer token is only ever written into the ``Authorization`` header of a request: an
:class:`Endpoint` does not show it in its ``repr``, and no message quotes a header.
"""

from __future__ import annotations

import base64
import codecs
import itertools
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from typing import TYPE_CHECKING

# httpx's package face imports its command-line tool (click, pygments, Rich) whenever those are
# installed, and they are, beside Textual. memtui never uses that tool, and the core must not load
# Rich (DESIGN.md §3; tests/test_layers.py): a ``None`` entry makes that one import fail, so httpx
# keeps its stub ``main`` (and every ``memtui graph --remote`` starts ~40 ms sooner).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

if TYPE_CHECKING:
    import httpx
    from httpx_sse import ServerSentEvent


def _httpx():  # noqa: ANN202 - the httpx module
    """httpx, imported on first use: it and its imports (ssl, email, http.client) cost a local
    graph command about a third of its start-up, and only a remote graph talks HTTP."""
    import httpx

    return httpx

from memtui.core import jsonio
from memtui.core.bulk import bulk
from memtui.core.text import shown_url
from memtui.core.mcp.errors import (McpAuthError, McpError, McpServerError, McpTimeout, McpToolError,
                                    McpToolMissing, McpUnreachable)

#: The revision with per-request metadata (no session), tried first.
MODERN = "2026-07-28"
#: The newest revision of the initialize handshake, offered to servers that are not modern.
LEGACY = "2025-11-25"
#: Seconds without a byte from the server before a request is given up (``[graph] timeout``).
DEFAULT_TIMEOUT = 30.0
#: Seconds one answer may take in all, however slowly it trickles (``[graph] deadline``).
DEFAULT_DEADLINE = 600.0
#: Largest answer taken, in bytes (``[graph] max_answer_mb``): a graph of 50,000 entities answers
#: about 60 MB; parsing an answer takes about four times its size in memory.
DEFAULT_MAX_ANSWER = 512 * 1_000_000
#: JSON-RPC error code of 2026-07-28 for a protocol version the server does not speak.
UNSUPPORTED_VERSION = -32022
#: memtui's name towards servers (``clientInfo``).
CLIENT_INFO = {"name": "memtui", "version": "0.1.0"}

ProgressFn = Callable[[int], None]


def throttled(progress: ProgressFn, seconds: float = 0.25) -> ProgressFn:
    """``progress`` called at most once every ``seconds`` (the first call always): a long answer
    reports after every chunk, thousands of times, and a reader that redraws (a terminal line,
    the TUI through its event loop) needs a few a second."""
    last = [float("-inf")]

    def report(count: int) -> None:
        now = time.monotonic()
        if now - last[0] >= seconds:
            last[0] = now
            progress(count)

    return report


@dataclass(frozen=True)
class Endpoint:
    """Where a remote MCP server is and how to authenticate to it.

    Attributes:
        url: the MCP endpoint (``https://…/v1/mcp``).
        token: the bearer token, or ``None``; sent only as ``Authorization: Bearer …``, never
            shown (not in ``repr``, not in any message).
        token_source: where the token came from, for messages: ``"keyring"``,
            ``"environment"``, ``"config.json"`` or ``""`` (none); ``"left out"`` (none) when the
            memory block's header is a backup's mark of a token it left out.
        where: where the URL came from, for messages (``"--remote"``, ``"[graph] remote in
            memtui.toml"``, ``"the memory block of config.json"``).
        timeout: seconds without an answer byte before a request fails.
        headers: other headers of the configuration block (sent as they are, never shown).
        deadline: seconds one answer may take in all (a server trickling bytes is given up).
        max_answer: largest answer taken, in bytes.
    """

    url: str
    token: str | None = field(default=None, repr=False)
    token_source: str = ""
    where: str = ""
    timeout: float = DEFAULT_TIMEOUT
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    deadline: float = DEFAULT_DEADLINE
    max_answer: int = DEFAULT_MAX_ANSWER

    @property
    def shown(self) -> str:
        """The URL without user information, query or fragment: safe for messages and the audit log."""
        return shown_url(self.url)


def _header_value(text: str) -> str:
    """A header value per 2026-07-28 "Value Encoding": plain visible ASCII as is, else the
    ``=?base64?…?=`` sentinel form."""
    plain = all(0x20 <= ord(c) <= 0x7E for c in text) and text == text.strip()
    if plain and not (text.startswith("=?base64?") and text.endswith("?=")):
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


class _RpcError(Exception):
    """A JSON-RPC error answer (internal: turned into a sentence by the caller)."""

    def __init__(self, code: int, message: str, data: Any = None, status: int = 200) -> None:
        super().__init__(message)
        self.code, self.message, self.data, self.status = code, message, data, status


class _SessionExpired(Exception):
    """HTTP 404 to a request carrying a legacy session id (internal)."""


class Client:
    """One connection to a remote MCP server (see the module docstring).

    Use as a context manager, or call :meth:`close`::

        with Client(endpoint) as client:
            graph = client.call_tool("read_graph", {})

    Args:
        endpoint: the server.
        http: an ``httpx.Client`` to use (tests); by default one is made and closed with this.

    Attributes:
        era: ``"modern"`` or ``"legacy"`` once connected, else ``None``.
        protocol_version: the negotiated version.
        server_info: the server's ``serverInfo`` (legacy) or ``{}``.
    """

    def __init__(self, endpoint: Endpoint, *, http: httpx.Client | None = None) -> None:
        self.endpoint = endpoint
        self._own_http = http is None
        httpx = _httpx()
        timeout = httpx.Timeout(endpoint.timeout, connect=min(endpoint.timeout, 10.0))
        self._http = http or httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False)
        self.era: str | None = None
        self.protocol_version: str | None = None
        self.session_id: str | None = None
        self.server_info: dict = {}
        self.capabilities: dict = {}
        self._tools: dict[str, dict] | None = None
        self._resources: dict[str, dict] | None = None
        self._ids = itertools.count(1)
        self._limit = _Limit(endpoint, "")
        self.reinitialised = 0

    # -- life cycle ----------------------------------------------------------------------------
    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> None:
        """Detect the server's era and open a session if it needs one (idempotent).

        Raises:
            McpError: any failure (a sentence; see the module docstring).
        """
        if self.era is not None:
            return
        try:
            result = self._request("server/discover", {}, modern=True)
        except _RpcError as exc:
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            if exc.code == UNSUPPORTED_VERSION and isinstance(supported, list) and supported and not any(
                    v in supported for v in ("2024-11-05", "2025-03-26", "2025-06-18", LEGACY)):
                raise McpServerError(
                    f"the MCP server at {self.endpoint.shown} speaks only protocol versions "
                    f"{', '.join(map(str, supported))}, none of which memtui knows; update memtui.") from None
            self._handshake()
            return
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        if isinstance(versions, list) and MODERN in versions:
            self.era, self.protocol_version = "modern", MODERN
            self.server_info = dict(result.get("serverInfo") or {})
            self.capabilities = _dict(result.get("capabilities"))
            tools = result.get("tools")
            if isinstance(tools, list):
                self._tools = {t["name"]: t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
            return
        self._handshake()

    def _handshake(self) -> None:
        """The legacy ``initialize`` / ``notifications/initialized`` exchange."""
        self.era, self.session_id, self.protocol_version = "legacy", None, None
        try:
            result = self._request("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                                  "clientInfo": CLIENT_INFO})
        except _RpcError as exc:
            self.era = None
            raise McpServerError(f"the MCP server at {self.endpoint.shown} refused to start a session "
                                 f"({exc.code}: {exc.message}).") from None
        except McpError:
            self.era = None
            raise
        if not isinstance(result, dict) or not isinstance(result.get("protocolVersion"), str):
            self.era = None
            raise McpServerError(f"the MCP server at {self.endpoint.shown} answered initialize without a "
                                 "protocol version; it is not an MCP server memtui can use.")
        self.protocol_version = result["protocolVersion"]
        self.server_info = dict(result.get("serverInfo") or {})
        self.capabilities = _dict(result.get("capabilities"))
        self._notify("notifications/initialized")

    def close(self) -> None:
        """End a legacy session with ``DELETE`` (a failure is ignored) and close the connection."""
        try:
            if self.era == "legacy" and self.session_id:
                try:
                    self._http.delete(self.endpoint.url, headers=self._headers(None, None))
                except _httpx().HTTPError:
                    pass
        finally:
            self.session_id = None
            self.era = None
            if self._own_http:
                self._http.close()

    # -- tools ---------------------------------------------------------------------------------
    def tools(self) -> dict[str, dict]:
        """The server's tools by name (``tools/list``, all pages; cached).

        Raises:
            McpError: the server failed.
        """
        self.connect()
        if self._tools is None:
            tools: dict[str, dict] = {}
            cursor = None
            for _ in range(100):  # a server paging forever is a broken server
                params: dict = {"cursor": cursor} if cursor else {}
                result = self._call("tools/list", params)
                for tool in result.get("tools") or []:
                    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                        tools[tool["name"]] = tool
                cursor = result.get("nextCursor")
                if not cursor:
                    break
            self._tools = tools
        return self._tools

    def resources(self) -> dict[str, dict]:
        """The server's resources by URI (``resources/list``, all pages; cached); empty when the
        server does not declare the ``resources`` capability.

        Raises:
            McpError: the server failed.
        """
        self.connect()
        if self._resources is None:
            found: dict[str, dict] = {}
            cursor = None
            for _ in range(100 if "resources" in self.capabilities else 0):
                params: dict = {"cursor": cursor} if cursor else {}
                result = self._call("resources/list", params)
                for item in (result.get("resources") or []) if isinstance(result, dict) else []:
                    if isinstance(item, dict) and isinstance(item.get("uri"), str):
                        found[item["uri"]] = item
                cursor = result.get("nextCursor") if isinstance(result, dict) else None
                if not cursor:
                    break
            self._resources = found
        return self._resources

    def read_resource(self, uri: str, progress: ProgressFn | None = None) -> list[dict]:
        """``resources/read`` of ``uri``: its ``contents`` (each a dict with ``uri`` and ``text``
        or ``blob``).

        Raises:
            McpError: the server failed, or answered without contents.
        """
        result = self._call("resources/read", {"uri": uri}, name=uri, progress=progress)
        contents = result.get("contents") if isinstance(result, dict) else None
        if not isinstance(contents, list) or not all(isinstance(c, dict) for c in contents):
            raise McpServerError(f"the MCP server at {self.endpoint.shown} answered resources/read of {uri} "
                                 "without contents.")
        return contents

    def require(self, *names: str) -> None:
        """Check that the server lists every tool in ``names``.

        Raises:
            McpToolMissing: one or more are missing (the message names them).
        """
        listed = self.tools()
        missing = [n for n in names if n not in listed]
        if missing:
            raise McpToolMissing(
                f"the MCP server at {self.endpoint.shown} has no tool {', '.join(missing)} (it lists "
                f"{', '.join(sorted(listed)) or 'none'}); memtui needs it for this, so nothing was done.")

    def call_tool(self, name: str, arguments: dict, progress: ProgressFn | None = None) -> Any:
        """Call the tool ``name`` and return its result: ``structuredContent`` when the server
        gives it, else the first text content parsed as JSON, else that text.

        Args:
            name: the tool.
            arguments: its arguments (JSON-able).
            progress: called with the bytes received so far while a long answer arrives.

        Raises:
            McpToolError: the tool reported an error (``isError``).
            McpError: any other failure.
        """
        result = self._call("tools/call", {"name": name, "arguments": arguments}, name=name, progress=progress)
        if not isinstance(result, dict):
            raise McpServerError(f"the MCP server at {self.endpoint.shown} answered {name} with something "
                                 "that is not a tool result.")
        text = ""
        for item in result.get("content") or []:
            if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
                text = item["text"]
                break
        if result.get("isError"):
            raise McpToolError(f"the tool {name} of {self.endpoint.shown} failed: {text[:500] or 'no reason given'}")
        if "structuredContent" in result and result["structuredContent"] is not None:
            return result["structuredContent"]
        try:
            return jsonio.loads(text)
        except ValueError:
            return text

    # -- the wire --------------------------------------------------------------------------------
    def _call(self, method: str, params: dict, name: str | None = None, progress: ProgressFn | None = None) -> Any:
        """A request on the connected session, with the one re-initialisation of an expired one."""
        self.connect()
        for attempt in (0, 1):
            try:
                return self._request(method, params, name=name, progress=progress,
                                     modern=self.era == "modern")
            except _SessionExpired:
                if attempt:
                    break
                self.reinitialised += 1
                self._handshake()
            except _RpcError as exc:
                raise McpServerError(f"the MCP server at {self.endpoint.shown} answered {name or method} "
                                     f"with an error ({exc.code}: {exc.message[:300]}).") from None
        raise McpServerError(f"the MCP server at {self.endpoint.shown} expired the session again right after "
                             "memtui opened a new one; try again later.")

    def _headers(self, method: str | None, name: str | None, modern: bool = False) -> dict[str, str]:
        headers = {key: value for key, value in self.endpoint.headers}
        if self.endpoint.token:
            headers["Authorization"] = f"Bearer {self.endpoint.token}"
        if method is not None:
            headers["Accept"] = "application/json, text/event-stream"
            headers["Content-Type"] = "application/json"
        if modern:
            headers["MCP-Protocol-Version"] = MODERN
            if method is not None:
                headers["Mcp-Method"] = method
            if name is not None:
                headers["Mcp-Name"] = _header_value(name)
        else:
            if self.protocol_version:
                headers["MCP-Protocol-Version"] = self.protocol_version
            if self.session_id:
                headers["Mcp-Session-Id"] = self.session_id
        return headers

    def _notify(self, method: str) -> None:
        body = json.dumps({"jsonrpc": "2.0", "method": method}).encode("utf-8")
        try:
            response = self._http.post(self.endpoint.url, content=body, headers=self._headers(method, None))
        except _httpx().HTTPError as exc:
            raise self._network_error(exc) from None
        if response.status_code >= 400:
            self._status_error(response.status_code, response.content, method)

    def _request(self, method: str, params: dict, *, name: str | None = None, progress: ProgressFn | None = None,
                 modern: bool = False) -> Any:
        """POST one request and return its ``result``.

        Raises:
            _RpcError: a JSON-RPC error answer (also a 4xx whose body is one).
            _SessionExpired: 404 to a request carrying a legacy session id.
            McpError: every other failure.
        """
        message_id = next(self._ids)
        if modern:
            params = dict(params, _meta={"io.modelcontextprotocol/protocolVersion": MODERN,
                                         "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                                         "io.modelcontextprotocol/clientCapabilities": {}})
        message = {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}
        try:
            body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (a name from a non-UTF-8 argv): JSON's own escape
            body = json.dumps(message).encode("ascii")
        headers = self._headers(method, name, modern)
        sent_session = "Mcp-Session-Id" in headers
        self._limit = _Limit(self.endpoint, name or method)
        try:
            with self._http.stream("POST", self.endpoint.url, content=body, headers=headers) as response:
                status = response.status_code
                if status == 404 and sent_session:
                    b"".join(self._limit.chunks(response))
                    raise _SessionExpired()
                if status >= 400 or status in (202, 204):
                    data = b"".join(self._limit.chunks(response))
                    rpc = _rpc_error(data, status)
                    if rpc is not None and status in (400, 404, 405):
                        raise rpc
                    if method == "server/discover" and status in (400, 404, 405) and not self._old_sse(response):
                        raise _RpcError(0, f"HTTP {status}", status=status)  # not modern: try the handshake
                    self._status_error(status, data, name or method, old_sse=self._old_sse(response))
                if method == "initialize":
                    self.session_id = response.headers.get("mcp-session-id") or None
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind == "text/event-stream":
                    answer = self._from_stream(response, message_id, progress, name or method)
                else:
                    answer = self._from_json(response, message_id, progress, name or method)
        except _httpx().HTTPError as exc:
            raise self._network_error(exc) from None
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            raise _RpcError(int(error.get("code", 0) or 0), str(error.get("message", "")), error.get("data"))
        return answer.get("result")

    def _from_json(self, response: httpx.Response, message_id: int, progress: ProgressFn | None, what: str) -> dict:
        chunks = []
        for chunk in self._limit.chunks(response):
            chunks.append(chunk)
            if progress is not None:
                progress(response.num_bytes_downloaded)
        try:
            with bulk():  # a whole graph's answer can be one message
                answer = jsonio.loads(b"".join(chunks))
        except ValueError:
            raise McpServerError(f"the MCP server at {self.endpoint.shown} answered {what} with something "
                                 "that is not JSON.") from None
        if not isinstance(answer, dict) or answer.get("id") != message_id:
            raise McpServerError(f"the MCP server at {self.endpoint.shown} answered {what} with a message that "
                                 "is not the answer to memtui's request.")
        return answer

    def _from_stream(self, response: httpx.Response, message_id: int, progress: ProgressFn | None,
                     what: str) -> dict:
        count = 0
        for event in _events(response, progress, self._limit):
            count += 1
            if event.event not in ("", "message") or not event.data.strip():
                continue
            try:
                with bulk():  # a whole graph's answer is one event
                    message = jsonio.loads(event.data)
            except ValueError:
                raise McpServerError(
                    f"the event stream from {self.endpoint.shown} is malformed: event {count} of the answer to "
                    f"{what} is not JSON; nothing was taken from it.") from None
            if isinstance(message, dict) and message.get("id") == message_id and (
                    "result" in message or "error" in message):
                return message
        raise McpServerError(f"the event stream from {self.endpoint.shown} ended without an answer to {what} "
                             f"({count} events); the server may have stopped mid-answer.")

    def _network_error(self, exc: httpx.HTTPError) -> McpError:
        shown = self.endpoint.shown
        httpx = _httpx()
        if isinstance(exc, httpx.TimeoutException):
            return McpTimeout(f"the MCP server at {shown} did not answer within {self.endpoint.timeout:g} s; "
                              "try again, or allow longer with `[graph] timeout = SECONDS` in memtui.toml.")
        if isinstance(exc, (httpx.ConnectError, httpx.UnsupportedProtocol)):
            reason = str(exc).split("] ")[-1] or type(exc).__name__
            return McpUnreachable(f"cannot reach the MCP server at {shown} ({reason}); check the address "
                                  f"({self.endpoint.where or 'as given'}) and that the server runs.")
        if isinstance(exc, httpx.RemoteProtocolError):
            return McpServerError(f"the MCP server at {shown} closed the connection mid-answer; it may have "
                                  "stopped. Nothing more was sent.")
        return McpServerError(f"talking to the MCP server at {shown} failed ({type(exc).__name__}).")

    def _old_sse(self, response: httpx.Response) -> bool:
        """Whether a refused POST came from an endpoint of the old HTTP+SSE transport (protocol
        2024-11-05: ``GET /sse`` opens the stream, messages go to another path): an address ending
        in ``/sse``, or an answer allowing ``GET`` and not ``POST``."""
        if response.status_code not in (404, 405):
            return False
        allow = {m.strip().upper() for m in response.headers.get("allow", "").split(",") if m.strip()}
        return _httpx().URL(self.endpoint.url).path.rstrip("/").endswith("/sse") or ("GET" in allow and "POST" not in allow)

    def _status_error(self, status: int, data: bytes, what: str, old_sse: bool = False) -> None:
        shown = self.endpoint.shown
        if old_sse:
            raise McpUnreachable(
                f"{shown} speaks the old MCP transport (HTTP+SSE, with a GET /sse stream), which memtui does not; "
                "memtui needs the streamable HTTP transport (one POST address, usually ending in /mcp). Serve the "
                "same server with it (supergateway --outputTransport streamableHttp, or mcp-proxy, both answer at "
                f"/mcp) and give that URL ({self.endpoint.where or 'as given'}).")
        if status in (401, 403):
            raise McpAuthError(_auth_sentence(self.endpoint, status))
        if status == 404:
            raise McpUnreachable(
                f"there is no MCP route at {shown} (HTTP 404). If this is the proxy's /v1/mcp, the deployment "
                "has no memory graph: the route is registered only when its token secret "
                "(CRAB_MCP_TOKEN_SECRET) is set. Otherwise check the address "
                f"({self.endpoint.where or 'as given'}).", reference="seed 002")
        if status == 405:
            raise McpUnreachable(f"{shown} does not accept MCP requests (HTTP 405); check the address "
                                 f"({self.endpoint.where or 'as given'}).")
        if status >= 500:
            raise McpServerError(f"the MCP server at {shown} failed (HTTP {status}) while answering {what}; "
                                 "try again later.")
        if status in (202, 204):
            raise McpServerError(f"the MCP server at {shown} accepted {what} without answering it (HTTP {status}).")
        raise McpServerError(f"the MCP server at {shown} refused {what} (HTTP {status}).")


class _Limit:
    """The bounds of one answer: :attr:`Endpoint.deadline` seconds in all and
    :attr:`Endpoint.max_answer` bytes, checked as each chunk arrives (the idle timeout of httpx
    counts only silence, so a server sending a byte a second would otherwise hold memtui forever,
    and a huge answer would be held whole before being refused)."""

    def __init__(self, endpoint: Endpoint, what: str) -> None:
        self.endpoint, self.what = endpoint, what
        self.ends = time.monotonic() + endpoint.deadline

    def check(self, received: int) -> None:
        """Raise when the answer is past its deadline or its size cap."""
        shown = self.endpoint.shown
        if received > self.endpoint.max_answer:
            raise McpServerError(
                f"the MCP server at {shown} sent more than {self.endpoint.max_answer / 1e6:,.0f} MB answering "
                f"{self.what}, so memtui stopped reading it and took nothing from it; allow more with "
                "`[graph] max_answer_mb = MEGABYTES` in memtui.toml if that is expected.")
        if time.monotonic() > self.ends:
            raise McpTimeout(
                f"the MCP server at {shown} was still sending its answer to {self.what} after "
                f"{self.endpoint.deadline:g} s ({received:,} bytes so far), so memtui gave up and took nothing from "
                "it; try again, or allow longer with `[graph] deadline = SECONDS` in memtui.toml.")

    def chunks(self, response: httpx.Response) -> Iterator[bytes]:
        """``response``'s body bytes, checked after each chunk."""
        self.check(0)
        for chunk in response.iter_bytes():
            self.check(response.num_bytes_downloaded)
            yield chunk


def _events(response: httpx.Response, progress: ProgressFn | None, limit: _Limit) -> Iterator[ServerSentEvent]:
    """The server-sent events of ``response`` (httpx-sse), calling ``progress`` with the bytes
    received after every chunk (a 60 MB answer is one event, and a reader waiting on it should
    see it arrive) and checking the answer's bounds (:class:`_Limit`)."""
    from httpx_sse import EventSource

    return EventSource(_Counted(response, progress, limit)).iter_sse()  # type: ignore[arg-type]


class _Counted:
    """``response`` as :class:`EventSource` reads it (headers, ``iter_text``), with ``progress``
    called and the bounds checked after each chunk."""

    def __init__(self, response: httpx.Response, progress: ProgressFn | None, limit: _Limit) -> None:
        self._response, self._progress, self._limit = response, progress, limit
        self.headers = response.headers

    def iter_text(self) -> Iterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        for chunk in self._limit.chunks(self._response):
            if self._progress is not None:
                self._progress(self._response.num_bytes_downloaded)
            text = decoder.decode(chunk)
            if text:
                yield text
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail


def _dict(value: object) -> dict:
    return dict(value) if isinstance(value, dict) else {}


def _rpc_error(data: bytes, status: int) -> _RpcError | None:
    try:
        message = jsonio.loads(data)
    except ValueError:
        return None
    if isinstance(message, dict) and isinstance(message.get("error"), dict):
        error = message["error"]
        code = error.get("code")
        if isinstance(code, int):
            return _RpcError(code, str(error.get("message", "")), error.get("data"), status)
    return None


def _auth_sentence(endpoint: Endpoint, status: int) -> str:
    what = "refused the token" if endpoint.token else "asks for a token and memtui sent none"
    shown = endpoint.shown
    if endpoint.token_source == "config.json":
        fix = ("the token is the Authorization header of the memory block in config.json: ask the proxy to "
               "write a fresh block (rotating its signing secret revokes every token), or set one with "
               "`memtui secret set graph-token`")
    elif endpoint.token_source == "left out":
        fix = ("the memory block of config.json came from a backup, which leaves its token out (a secret): put "
               "it back with `memtui secret set graph-token` (or MEMTUI_GRAPH_TOKEN for one run), or let the "
               "proxy write the block again")
    elif endpoint.token:
        fix = (f"the token came from the {endpoint.token_source or 'keyring'} and is wrong or revoked (rotating the "
               "proxy's signing secret revokes every token): set the current one with "
               "`memtui secret set graph-token` (or MEMTUI_GRAPH_TOKEN for one run)")
    else:
        fix = ("set it with `memtui secret set graph-token` (or MEMTUI_GRAPH_TOKEN for one run), or use the "
               "memory block of the workspace's config.json, which carries it")
    return f"the MCP server at {shown} {what} (HTTP {status}); {fix}."


__all__ = ["Client", "Endpoint", "McpError", "DEFAULT_TIMEOUT", "MODERN", "LEGACY", "shown_url"]
