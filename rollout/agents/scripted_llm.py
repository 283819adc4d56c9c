"""A small OpenAI-compatible Chat Completions server that answers from a script.

For tests and offline demos (yours too: docs/integrations.md shows it driving an agent SDK):
the real `openai` client, or any agent built on one, talks to it over real HTTP on
127.0.0.1. A request with `"stream": true` is answered with server-sent events, one chunk
with the whole reply then the finish reason and usage, as OpenAI streams. Each request
takes the next entry of the script:
- an assistant reply: `{"content": "...", "tool_calls": [{"name": "mail_reply", "arguments": {...}}]}`
  (`arguments` may be a dict, sent as JSON, or a raw string, sent as is, e.g. malformed JSON);
  with an optional `"finish_reason"` (e.g. `"length"` for an answer cut off at max_tokens);
- an HTTP error: `{"status": 500, "error": "overloaded"}`, with optional response headers:
  `{"status": 429, "error": "slow down", "headers": {"Retry-After": "2"}}`;
- any entry with `"delay": seconds` is answered that much later (to make a client time out);
- or a callable `(request_json) -> entry` for replies that depend on the request.
When the script runs out, it answers `{"content": "Done."}`. Every request body is kept
in `requests` for assertions. `GET /v1/models` (what a start-up check asks) lists the model
without taking a script entry; such requests are counted in `model_list_requests`. The
`Authorization` header of every request (model lists included) is kept in `keys`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Entry = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


class ScriptedLLM:
    """Serve the script on 127.0.0.1 in a background thread; use as a context manager."""

    def __init__(self, script: list[Entry], *, model: str = "scripted", host: str = "127.0.0.1") -> None:
        self.script = list(script)
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.model_list_requests = 0
        self.keys: list[str] = []
        #: Set to an error status (e.g. 401) to refuse model-list requests.
        self.model_list_status = 200
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host if isinstance(host, str) else host.decode()}:{port}/v1"

    def __enter__(self) -> ScriptedLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(request)
            entry: Entry = self.script.pop(0) if self.script else {"content": "Done."}
        return entry(request) if callable(entry) else entry

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:
                llm.keys.append(self.headers.get("Authorization", ""))
                if not self.path.rstrip("/").endswith("/models"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with llm._lock:
                    llm.model_list_requests += 1
                if llm.model_list_status != 200:
                    self._send(llm.model_list_status, {"error": {"message": "refused"}})
                    return
                model = {"id": llm.model, "object": "model", "created": 0, "owned_by": "scripted"}
                self._send(200, {"object": "list", "data": [model]})

            def do_POST(self) -> None:
                llm.keys.append(self.headers.get("Authorization", ""))
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                entry = llm._next(request)
                if entry.get("delay"):
                    time.sleep(float(entry["delay"]))  # this handler's own thread: a slow endpoint
                if "status" in entry:
                    body = {"error": {"message": entry.get("error", "error")}}
                    self._send(int(entry["status"]), body, entry.get("headers", {}))
                    return
                body = completion(entry, request.get("model") or llm.model, len(llm.requests))
                if request.get("stream"):
                    self._stream(body)
                else:
                    self._send(200, body)

            def _stream(self, body: dict[str, Any]) -> None:
                data = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in chunks(body))
                data += b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def completion(entry: dict[str, Any], model: str, n: int) -> dict[str, Any]:
    """A Chat Completions response body for one scripted assistant reply."""
    message: dict[str, Any] = {"role": "assistant", "content": entry.get("content")}
    calls = entry.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {
                "id": call.get("id", f"call_{n}_{i}"),
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call.get("arguments"), str)
                    else json.dumps(call.get("arguments", {})),
                },
            }
            for i, call in enumerate(calls)
        ]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": entry.get("finish_reason") or ("tool_calls" if calls else "stop"),
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Chat Completions response body as the stream of chunks that OpenAI sends for it:
    the reply (content and tool calls) in one delta, the finish reason, then the usage."""
    choice = body["choices"][0]
    delta: dict[str, Any] = {"role": "assistant", "content": choice["message"]["content"]}
    if choice["message"].get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(choice["message"]["tool_calls"])]
    head = {k: body[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    return [
        head | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        head | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        head | {"choices": [], "usage": body["usage"]},
    ]
