"""A local HTTP server that speaks just enough of the Anthropic, OpenAI and Gemini wire formats for tests.

It listens on 127.0.0.1 on a free port, records every request (path, headers, JSON body)
and replies with canned JSON bodies, in order. Nothing ever leaves the machine.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeLLMServer:
    """A threaded fake LLM endpoint: queue replies, run the SDK, read the recorded requests."""

    def __init__(self):
        self.requests = []
        self.replies = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake-llm", daemon=True)

    @property
    def base_url(self):
        """The server's root, e.g. ``http://127.0.0.1:54321``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def reply(self, *bodies):
        """Queue JSON bodies to answer the next requests, one each."""
        with self._lock:
            self.replies.extend(bodies)

    def bodies(self):
        """The JSON bodies of the requests received so far."""
        return [request["body"] for request in self.requests]

    def _next(self, path, headers, body):
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "body": body})
            return self.replies.pop(0) if self.replies else None

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __repr__(self):
        return f"FakeLLMServer({self.base_url!r}, requests={len(self.requests)}, queued={len(self.replies)})"


def _handler_for(fake):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            headers = {key.lower(): value for key, value in self.headers.items()}
            reply = fake._next(self.path.split("?")[0], headers, body)
            if reply is None:
                self._send(500, {"error": {"message": f"fake server: no reply queued for {self.path}"}})
            else:
                self._send(200, reply)

        def _send(self, status, payload):
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args):
            pass

    return Handler
