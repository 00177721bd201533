"""Failures of the MCP client: each one is an :class:`~memtui.core.errors.ExternalError` (exit 4)
whose ``str`` is a sentence saying what happened and what to do. No message ever holds a header
value (the bearer token lives only in the ``Authorization`` header of a request).
"""

from __future__ import annotations

from memtui.core.errors import ExternalError


class McpError(ExternalError):
    """The remote MCP server could not be used (the base of the kinds below)."""


class McpUnreachable(McpError):
    """No connection: refused, unknown host, TLS failure, or no MCP route at that address."""


class McpAuthError(McpError):
    """The server refused the request with 401 or 403 (token missing, wrong or revoked)."""


class McpTimeout(McpError):
    """The server did not answer within the timeout."""


class McpServerError(McpError):
    """The server failed (5xx), broke the protocol (a malformed event stream, no answer to the
    request), or answered a JSON-RPC error."""


class McpToolMissing(McpError):
    """The server does not list a tool memtui needs."""


class McpToolError(McpError):
    """A tool ran and reported an error (``isError``); the message quotes the server's text."""
