"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks: real HTTP, so litellm and
instructor run for real. Each request is answered by a *script* (a list of :class:`Reply`, the last repeating,
or a function ``(request_json, request_number) -> Reply``): JSON, raw text, an HTTP error with Retry-After,
latency or a hang; the server counts requests, peak concurrency and tokens.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    body: dict | None = None  # the structured answer (tool arguments or JSON content)
    raw: str | None = None  # content sent verbatim instead (e.g. invalid or truncated JSON)
    status: int = 200
    retry_after: float | None = None
    latency: float = 0.0
    hang: float = 0.0  # sleep this long, then drop the connection without answering (a hung provider)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None  # e.g. "length": the answer was cut at max_tokens
    echo_key: bool = False  # an error whose message quotes the request's API key, as some providers do


Script = list[Reply] | Callable[[dict, int], Reply]


def schema_of(request: dict) -> dict | None:
    """The JSON schema the client asked for, from its tools or its response_format."""
    tools = request.get("tools") or []
    if tools:
        return tools[0].get("function", {}).get("parameters")
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema")
    return None


def example_for(schema: dict | None, defs: dict | None = None) -> Any:
    """A minimal instance that validates against ``schema`` (first enum value, first item, ...)."""
    if schema is None:
        return {}
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return example_for(defs[schema["$ref"].split("/")[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return example_for(schema[key][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {k: example_for(v, defs) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        n = schema.get("minItems", 0)
        return [example_for(schema.get("items", {}), defs) for _ in range(n)]
    if kind == "string":
        return "x" * schema.get("minLength", 1)
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0.0))
    if kind == "boolean":
        return False
    return None


def count_tokens(text: str) -> int:
    """The server's own token count: one per four characters, at least one."""
    return max(1, len(text) // 4)


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (a timeout, a restart) is routine here, not an error to print."""

    def handle_error(self, request, client_address):
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


@dataclass
class Stats:
    requests: int = 0
    in_flight: int = 0
    peak_concurrency: int = 0
    prompt_tokens: int = 0  # reported in answered (status 200) responses
    completion_tokens: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    bodies: list[dict] = field(default_factory=list)


class ScriptedServer:
    """Start with ``with ScriptedServer(script) as server:``; ``server.base_url`` is the api_base."""

    def __init__(self, script: Script | None = None, keep_bodies: bool = True, port: int = 0):
        self.script: Script = script if script is not None else (lambda req, n: Reply(body=example_for(schema_of(req))))
        self.keep_bodies = keep_bodies
        self.stats = Stats()
        self._lock = threading.Lock()
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle -----------------------------------------------------------------------------------
    def start(self) -> "ScriptedServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms delayed-ACK stall

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                server._handle(self)

        self._httpd = _QuietServer(("127.0.0.1", self._port), Handler)
        self._httpd.daemon_threads = True
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def restart(self) -> None:
        """Stop and start again on the same port (connections in flight are cut)."""
        self.stop()
        self.start()

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    # -- requests ----------------------------------------------------------------------------------------
    def _reply_for(self, request: dict, n: int) -> Reply:
        if callable(self.script):
            return self.script(request, n)
        return self.script[min(n, len(self.script) - 1)]

    def _handle(self, http: BaseHTTPRequestHandler) -> None:
        length = int(http.headers.get("Content-Length") or 0)
        try:
            request = json.loads(http.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            request = {}
        with self._lock:
            n = self.stats.requests
            self.stats.requests += 1
            self.stats.in_flight += 1
            self.stats.peak_concurrency = max(self.stats.peak_concurrency, self.stats.in_flight)
            if self.keep_bodies:
                self.stats.bodies.append(request)
        status = 0  # 0: the reply was never sent (the client went away)
        try:
            reply = self._reply_for(request, n)
            status = reply.status
            if reply.hang:
                time.sleep(reply.hang)
                status = -1  # hung: nothing is sent, nothing is billed
                http.close_connection = True
                return
            if reply.latency:
                time.sleep(reply.latency)
            self._send(http, request, reply)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self._lock:
                self.stats.in_flight -= 1
                self.stats.statuses[status] = self.stats.statuses.get(status, 0) + 1

    def _send(self, http: BaseHTTPRequestHandler, request: dict, reply: Reply) -> None:
        if reply.status != 200:
            message = f"scripted status {reply.status}"
            if reply.echo_key:
                key = (http.headers.get("Authorization") or "").removeprefix("Bearer ")
                message = f"Incorrect API key provided: {key}. You can find your API key at https://example.invalid (Bearer {key})"
            retry = {} if reply.retry_after is None else {"Retry-After": f"{reply.retry_after:g}"}
            _write(http, reply.status, {"error": {"message": message, "type": "scripted"}}, retry)
            return
        text = reply.raw if reply.raw is not None else json.dumps(reply.body, ensure_ascii=False)
        prompt = "".join(
            m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
            for m in request.get("messages", [])
        )
        prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else count_tokens(prompt)
        completion_tokens = reply.completion_tokens if reply.completion_tokens is not None else count_tokens(text)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        finish = "stop"
        if request.get("tools"):
            name = request["tools"][0]["function"]["name"]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": name, "arguments": text}}],
            }
            finish = "tool_calls"
        finish = reply.finish_reason or finish
        tokens = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        _write(http, 200, {"id": "chatcmpl-scripted", "object": "chat.completion",
                           "created": int(time.time()), "model": request.get("model", "scripted"),
                           "usage": {**tokens, "total_tokens": prompt_tokens + completion_tokens},
                           "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
        with self._lock:  # counted once sent: what the server bills is what it delivered
            self.stats.prompt_tokens += prompt_tokens
            self.stats.completion_tokens += completion_tokens


def _write(http: BaseHTTPRequestHandler, status: int, body: dict, headers: dict | None = None) -> None:
    payload = json.dumps(body).encode()
    http.send_response(status)
    headers = {**(headers or {}), "Content-Type": "application/json", "Content-Length": str(len(payload))}
    for name, value in headers.items():
        http.send_header(name, value)
    http.end_headers()
    http.wfile.write(payload)
    http.wfile.flush()
