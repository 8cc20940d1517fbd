"""A loopback OpenAI-compatible chat-completions server for tests (not a test module).

    with OpenAIStub([stub_text("hi"), stub_tool_call("transfer_to_sales", "{}")]) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        ...
        stub.requests  # every decoded JSON request body, in order

Replies are served in order, streaming (SSE) when the request says ``"stream": true``.
A reply may also be a callable ``(request_body) -> reply`` or a plain ``str`` (text);
``respond=`` (such a callable) answers every request after the scripted ones.
An unscripted call gets HTTP 500 with an OpenAI-style error body; pass ``max_retries=0`` to
openai clients so they do not retry (and sleep) on it.

``OpenAIStub(..., delay=s)`` (or ``StubReply.delay``) waits ``s`` seconds before answering,
a slow model; ``stub_raw(body)`` answers 200 with a body that is not a completion at all.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "OpenAIStub",
    "StubReply",
    "stub_error",
    "stub_raw",
    "stub_text",
    "stub_tool_call",
    "stub_tool_calls",
]


@dataclass
class StubReply:
    """One scripted completion: text and/or tool calls ``(id, name, arguments string)``."""

    content: str | None = None
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    status: int = 200
    error: str | None = None
    usage: dict[str, int] | None = None
    #: Seconds to wait before answering (a slow model).
    delay: float = 0.0
    #: A 200 body sent as is (``content_type``), instead of a completion.
    raw: bytes | None = None
    content_type: str = "text/html"
    #: A streamed reply's first delta. OpenAI's (the default) has the role and ``content:
    #: ""``; some servers open a tool-call reply with ``{"role": "assistant", "content":
    #: None}``.
    opening: dict[str, Any] | None = None


_counter = 0
_counter_lock = threading.Lock()


def _new_call_id() -> str:
    global _counter
    with _counter_lock:
        _counter += 1
        return f"call_stub_{_counter}"


def _arguments(arguments: str | dict[str, Any] | None) -> str:
    if arguments is None:
        return "{}"
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def stub_text(text: str) -> StubReply:
    """A plain text completion."""
    return StubReply(content=text)


def stub_tool_call(
    name: str,
    arguments: str | dict[str, Any] | None = "{}",
    *,
    id: str | None = None,
    content: str | None = None,
) -> StubReply:
    """One tool call; ``arguments`` is sent verbatim when a string (malformed JSON allowed)."""
    return StubReply(
        content=content, tool_calls=[(id or _new_call_id(), name, _arguments(arguments))]
    )


def stub_tool_calls(
    calls: Sequence[tuple[str, str | dict[str, Any] | None]], content: str | None = None
) -> StubReply:
    """Several tool calls in one completion: ``[(name, arguments), ...]``."""
    return StubReply(
        content=content,
        tool_calls=[(_new_call_id(), name, _arguments(args)) for name, args in calls],
    )


def stub_error(status: int = 500, message: str = "stub error") -> StubReply:
    """An HTTP error response with an OpenAI-style error body."""
    return StubReply(status=status, error=message)


def stub_raw(body: bytes | str, content_type: str = "text/html") -> StubReply:
    """HTTP 200 with ``body`` as is: a malformed answer (a proxy's HTML page, say)."""
    data = body.encode() if isinstance(body, str) else body
    return StubReply(raw=data, content_type=content_type)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class OpenAIStub:
    """Serve scripted chat completions on ``127.0.0.1`` (random port) in a daemon thread."""

    def __init__(
        self,
        replies: Sequence[StubReply | str | Callable[[dict[str, Any]], Any]] = (),
        *,
        model: str | None = None,
        delay: float = 0.0,
        respond: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.replies: list[Any] = list(replies)
        #: Answers every request after the scripted replies (None: HTTP 500 instead).
        self.respond = respond
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.model = model
        self._served = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> OpenAIStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                stub._handle(self)

            def do_GET(self) -> None:
                stub._send_json(self, 404, {"error": {"message": "not found", "type": "stub"}})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="openai-stub", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("OpenAIStub is not running; use it as a context manager")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def remaining(self) -> int:
        """Scripted replies not served yet."""
        with self._lock:
            return len(self.replies) - self._served

    # -- serving ------------------------------------------------------------------------
    def _next_reply(self, body: dict[str, Any]) -> StubReply | None:
        with self._lock:
            self.requests.append(body)
            if self._served >= len(self.replies):
                if self.respond is None:
                    return None
                reply: Any = self.respond
            else:
                reply = self.replies[self._served]
                self._served += 1
        if callable(reply) and not isinstance(reply, StubReply):
            reply = reply(body)
        if isinstance(reply, str):
            reply = stub_text(reply)
        return reply

    @staticmethod
    def _send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(handler, 404, {"error": {"message": f"no route {handler.path}"}})
            return
        length = int(handler.headers.get("Content-Length") or 0)
        try:
            body = json.loads(handler.rfile.read(length) or b"{}")
        except ValueError as exc:
            self._send_json(handler, 400, {"error": {"message": f"bad JSON: {exc}"}})
            return
        reply = self._next_reply(body)
        wait = self.delay + (reply.delay if reply is not None else 0.0)
        if wait:
            time.sleep(wait)
        if reply is not None and reply.raw is not None:
            handler.send_response(200)
            handler.send_header("Content-Type", reply.content_type)
            handler.send_header("Content-Length", str(len(reply.raw)))
            handler.end_headers()
            handler.wfile.write(reply.raw)
            return
        if reply is None:
            message = (
                f"OpenAIStub: unscripted call {len(self.requests)} ({len(self.replies)} scripted)"
            )
            self._send_json(handler, 500, {"error": {"message": message, "type": "stub_exhausted"}})
            return
        if reply.error is not None or reply.status != 200:
            self._send_json(
                handler,
                reply.status,
                {"error": {"message": reply.error or "error", "type": "stub_error"}},
            )
            return
        model = self.model or body.get("model") or "stub-model"
        if body.get("stream"):
            self._stream(handler, body, reply, model)
        else:
            self._send_json(handler, 200, self._completion(reply, model))

    @staticmethod
    def _usage(reply: StubReply) -> dict[str, int]:
        if reply.usage is not None:
            return reply.usage
        completion = len(reply.content or "") // 4 + 3 * len(reply.tool_calls) + 1
        return {
            "prompt_tokens": 10,
            "completion_tokens": completion,
            "total_tokens": 10 + completion,
        }

    def _completion(self, reply: StubReply, model: str) -> dict[str, Any]:
        tool_calls = [
            {"id": tc_id, "type": "function", "function": {"name": name, "arguments": args}}
            for tc_id, name, args in reply.tool_calls
        ] or None
        return {
            "id": f"chatcmpl-stub-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": reply.content,
                        "refusal": None,
                        "tool_calls": tool_calls,
                    },
                    "logprobs": None,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
            "usage": self._usage(reply),
        }

    def _stream(
        self, handler: BaseHTTPRequestHandler, body: dict[str, Any], reply: StubReply, model: str
    ) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.end_headers()
        base = {
            "id": f"chatcmpl-stub-{len(self.requests)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        def send(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None):
            chunk = dict(base)
            chunk["choices"] = (
                []
                if delta is None
                else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
            )
            if usage is not None:
                chunk["usage"] = usage
            handler.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            handler.wfile.flush()

        send(reply.opening or {"role": "assistant", "content": "", "refusal": None})
        if reply.content:
            for piece in _pieces(reply.content, 4):
                send({"content": piece})
        for index, (tc_id, name, args) in enumerate(reply.tool_calls):
            send(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": tc_id,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
            for piece in _pieces(args, 3):
                send({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        send({}, "tool_calls" if reply.tool_calls else "stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            send(None, usage=self._usage(reply))
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
