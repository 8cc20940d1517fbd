"""A TCP proxy on loopback that can lose a commit's reply: the fault behind "did my turn get
stored?". Armed, it forwards the client's commit (the first chunk containing ``trigger``,
e.g. ``b"COMMIT"`` for Postgres, ``b"EXEC"`` for Redis) to the server, waits for the server's
answer (so the commit has happened), throws the answer away and closes the client's
connection."""

from __future__ import annotations

import contextlib
import socket
import threading


class DropReplyProxy:
    """``DropReplyProxy(server_port, b"COMMIT")``; connect to ``.port``; ``.arm()`` drops the
    reply to the next commit of any connection (once); ``.dropped`` counts drops."""

    def __init__(self, server_port: int, trigger: bytes) -> None:
        self.server_port, self.trigger = server_port, trigger
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._armed = threading.Event()
        self._lock = threading.Lock()
        self.dropped = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self) -> None:
        self._armed.set()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.server_port))
            state = {"dropping": False}
            threading.Thread(target=self._up, args=(client, upstream, state), daemon=True).start()
            threading.Thread(target=self._down, args=(client, upstream, state), daemon=True).start()

    def _up(self, client: socket.socket, upstream: socket.socket, state: dict) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if self.trigger in data and self._armed.is_set():
                    with self._lock:
                        if self._armed.is_set():
                            self._armed.clear()
                            state["dropping"] = True
                upstream.sendall(data)
        with contextlib.suppress(OSError):
            upstream.shutdown(socket.SHUT_WR)

    def _down(self, client: socket.socket, upstream: socket.socket, state: dict) -> None:
        with contextlib.suppress(OSError):
            while data := upstream.recv(65536):
                if state["dropping"]:  # the server answered the commit: it happened
                    self.dropped += 1
                    break
                client.sendall(data)
        for sock in (client, upstream):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
