"""The HTTP side of ``swarmgraph ui``: the page, the AG-UI endpoint, rejoining a run.

Standard library only (``http.server``, one thread a request): a run is driven by its own
thread (:mod:`.turn`), so a request only reads a run's log and may end at any moment.

=======================================  ==============================================
``GET /``, ``GET /static/NAME``           the page (static files shipped in the package)
``POST /agui``                            an AG-UI ``RunAgentInput``: a run, its events as
                                          server-sent events (``id:`` numbered from 1)
``GET /agui/runs/RUN[?thread=ID]``        the same run's events after ``Last-Event-ID``
                                          (header, or ``?after=N``), read from the store:
                                          what was missed, then live; 410 when those events
                                          are no longer kept (``thread``: for a run another
                                          process drove, or one this process forgot)
``GET /api/view?thread=ID``               the stored conversation, and the run going on it
``GET /api/conversations``, ``/api/graph`` the stored conversations; agents and handoffs
``POST /api/stop``, ``POST /api/restart`` stop a run; end this process (``{"run": ID}``)
=======================================  ==============================================

Safe by default: it binds 127.0.0.1; on any other host a token is required, checked on every
request (``Authorization: Bearer T``, or ``?token=T``); a request whose ``Host`` is not the
address served is refused (DNS rebinding); a POST must be ``application/json`` (a page of
another site cannot send one without the browser asking first).
"""

from __future__ import annotations

import hmac
import json
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .events import wire
from .runs import EventsDropped, NoTurnEvents, RunBusy, follow
from .service import UiService

__all__ = ["RESTART_EXIT", "UiServer", "make_server"]

#: What the process exits with when the page asks for a restart (the supervisor starts anew).
RESTART_EXIT = 3
_STATIC = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
_HEARTBEAT = 10.0  # seconds between SSE comments while a run is quiet
_MAX_BODY = 1 << 20
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class UiServer(ThreadingHTTPServer):
    """The server: its :class:`UiService`, the token (``None`` on loopback without one), and
    ``restart_requested`` (set by ``POST /api/restart``; the command then exits)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        service: UiService,
        *,
        token: str | None = None,
        sock: socket.socket | None = None,
    ) -> None:
        host = address[0]
        if host not in _LOOPBACK and not token:
            raise ValueError(f"serving on {host} (not loopback) needs a token (--token)")
        self.service, self.token = service, token
        self.restart_requested = threading.Event()
        super().__init__(address, _Handler, bind_and_activate=sock is None)
        if sock is not None:  # a socket the supervisor bound, kept across restarts
            self.socket.close()
            self.socket = sock
            self.server_address = sock.getsockname()[:2]

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return  # a page closed or reloaded mid-answer: nothing went wrong here
        super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{port}/"


def make_server(
    service: UiService, host: str = "127.0.0.1", port: int = 0, token: str | None = None
) -> UiServer:
    """A server for ``service`` on ``host:port`` (0: any free port); not yet serving.

    Example:
        >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
        >>> service = UiService(Swarm(chat_model=ScriptedChatModel([])), Agent(),
        ...                     url="memory://doc-server")
        >>> server = make_server(service)
        >>> server.url.startswith("http://127.0.0.1:")
        True
        >>> server.server_close()
    """
    return UiServer((host, port), service, token=token)


class _Handler(BaseHTTPRequestHandler):
    server: UiServer
    protocol_version = "HTTP/1.0"  # one response a connection: an SSE stream ends with it

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the terminal shows the URL, not every request

    # -- checks --------------------------------------------------------------------------
    def _allowed(self, query: dict[str, list[str]]) -> bool:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]")
        served = self.server.server_address[0]
        if host not in {served, *(_LOOPBACK if served in _LOOPBACK else ())}:
            self._json(HTTPStatus.FORBIDDEN, {"error": "unexpected Host header"})
            return False
        token = self.server.token
        if token is None:
            return True
        given = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        given = given or (query.get("token") or [""])[0]
        if hmac.compare_digest(given.encode(), token.encode()):
            return True
        self._json(HTTPStatus.UNAUTHORIZED, {"error": "a token is required"})
        return False

    def _body(self) -> Any:
        if self.headers.get_content_type() != "application/json":
            raise _Refused(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send application/json")
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_BODY:
            raise _Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body too large")
        try:
            return json.loads(self.rfile.read(length) or b"{}")
        except ValueError as error:
            raise _Refused(HTTPStatus.BAD_REQUEST, f"not JSON: {error}") from None

    # -- routes --------------------------------------------------------------------------
    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        if not self._allowed(query):
            return
        path, service = parts.path, self.server.service
        try:
            if path in ("/", "/index.html"):
                self._static("index.html")
            elif path.startswith("/static/"):
                self._static(path.removeprefix("/static/"))
            elif path == "/api/view":
                thread = (query.get("thread") or [service.thread])[0]
                self._json(HTTPStatus.OK, service.view(_thread(thread)))
            elif path == "/api/conversations":
                self._json(HTTPStatus.OK, {"conversations": service.conversations()})
            elif path == "/api/graph":
                self._json(HTTPStatus.OK, service.graph())
            elif path.startswith("/agui/runs/"):
                run = path.removeprefix("/agui/runs/")
                log = service.runs.get(run)
                thread = log.thread_id if log is not None else (query.get("thread") or [""])[0]
                if not thread:
                    self._json(HTTPStatus.NOT_FOUND, {"error": "no such run here: give ?thread="})
                    return
                after = self.headers.get("Last-Event-ID") or (query.get("after") or ["0"])[0]
                self._stream(_thread(thread), run, int(after or 0))
            else:
                self._json(HTTPStatus.NOT_FOUND, {"error": f"nothing at {path}"})
        except _Refused as refused:
            self._json(refused.status, {"error": refused.reason})
        except ValueError as error:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(error)})

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        if not self._allowed(parse_qs(parts.query)):
            return
        service = self.server.service
        try:
            body = self._body()
            if parts.path == "/agui":
                log = service.start(body, tokens=True)  # its client reads: stream the tokens
                self._stream(log.thread_id, log.run_id, 0)
            elif parts.path == "/api/stop":
                self._json(HTTPStatus.OK, {"stopping": service.stop(str(body.get("run", "")))})
            elif parts.path == "/api/restart":
                self._json(HTTPStatus.ACCEPTED, {"restarting": True})
                self.server.restart_requested.set()
                threading.Thread(target=self.server.shutdown, daemon=True).start()
            else:
                self._json(HTTPStatus.NOT_FOUND, {"error": f"nothing at {parts.path}"})
        except _Refused as refused:
            self._json(refused.status, {"error": refused.reason})
        except RunBusy as busy:
            self._json(HTTPStatus.CONFLICT, {"error": str(busy)})
        except ValueError as error:  # a malformed RunAgentInput (pydantic's is a ValueError)
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(error)})

    # -- answers ---------------------------------------------------------------------------
    def _stream(self, thread: str, run: str, after: int) -> None:
        """The run's events after ``after``, then live, as server-sent events."""
        url = self.server.service.url
        try:
            events = follow(url, thread, run, after, heartbeat=_HEARTBEAT)
            first = next(events, None)
        except EventsDropped as dropped:
            self._json(HTTPStatus.GONE, {"error": str(dropped)})
            return
        except NoTurnEvents:
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such run (or long over)"})
            return
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Run-Id", run)
        self.end_headers()
        try:
            if first is not None:
                self._frame(*first)
            for number, event in events:
                self._frame(number, event)
        except (BrokenPipeError, ConnectionResetError, EventsDropped):
            return  # the client went away (or fell too far behind): the run goes on
        except Exception as error:  # the store failed mid-stream: say so, as an SSE comment
            self.wfile.write(f": stream ended: {type(error).__name__}\n\n".encode())

    def _frame(self, number: int, event: Any) -> None:
        # The AG-UI model is built here, for a client that reads, never for a run alone.
        self.wfile.write(
            f"id: {number}\n{wire(event)}".encode() if number else b": still running\n\n"
        )
        self.wfile.flush()

    def _static(self, name: str) -> None:
        kind = _STATIC.get(name)
        if kind is None:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no file {name}"})
            return
        data = resources.files(__package__).joinpath("static", name).read_bytes()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        # Nothing from elsewhere, no inline script: the page's own files only.
        self.send_header(
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:",
        )
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status: HTTPStatus, value: Any) -> None:
        data = json.dumps(value, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)


class _Refused(Exception):
    def __init__(self, status: HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def _thread(text: str) -> str:
    from ...memory.ids import check_conversation_id

    return check_conversation_id(text)
