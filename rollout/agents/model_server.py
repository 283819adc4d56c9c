"""An OpenAI-compatible Chat Completions server for a local transformers model, with tool calls.

`coworkenv rollout --agent openai --endpoint agent=MODEL@http://127.0.0.1:PORT/v1` talks to it
like to any endpoint. Each request's messages and tools are rendered with the model's chat template;
the answer is generated (greedy at temperature 0, sampled above) up to `max_tokens`, and its
tool calls are read back in the template's format (`coworkenv.small_model.parse_tool_calls`):
- a call the model wrote as valid JSON comes back as a tool call with JSON arguments;
- a call whose JSON is broken but that names its tool comes back with the arguments as
  written, so the agent records the model's malformed call (never an HTTP error);
- a prompt longer than the model's context is refused with HTTP 400, as vLLM does.

One request is generated at a time (the CPU's cores serve one model call best). It binds
127.0.0.1. Run it with `python -m coworkenv.rollout.agents.model_server --model base` (or the
folder of a fine-tuned model); it needs the `[small-model]` extra.
"""

from __future__ import annotations

import argparse
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Protocol

from coworkenv.rollout.agents.scripted_llm import completion

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

DEFAULT_MAX_TOKENS = 256


class PromptTooLong(ValueError):
    """The rendered prompt does not leave room for one generated token."""


@dataclass
class Generated:
    """One generated answer: its text, its token counts and why it stopped."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


class Generator(Protocol):
    """What the server asks of a model: one answer to a conversation with tools."""

    def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Generated: ...


class ChatModel:
    """A transformers causal LM and its tokenizer, answering Chat Completions requests."""

    def __init__(
        self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, *, context: int | None = None
    ):
        self.model: Any = model
        self.tokenizer = tokenizer
        self.context = context or int(getattr(model.config, "max_position_embeddings", 2048))
        self.lock = threading.Lock()

    def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Generated:
        """Render, generate and decode one answer (special tokens dropped)."""
        import torch

        from coworkenv.small_model import template_messages

        prompt: Any = self.tokenizer.apply_chat_template(
            template_messages(messages),
            tools=list(tools) if tools else None,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
        )
        input_ids = prompt["input_ids"]
        n_prompt = int(input_ids.shape[1])
        room = self.context - n_prompt
        if room < 1:
            raise PromptTooLong(
                f"the prompt has {n_prompt} tokens and the model's context is {self.context}: "
                "send fewer or shorter messages"
            )
        end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        sampling: dict[str, Any] = {"do_sample": False}
        if temperature > 0:
            sampling = {"do_sample": True, "temperature": temperature}
        with self.lock, torch.inference_mode():
            torch.manual_seed(seed)
            output = self.model.generate(
                input_ids,
                attention_mask=prompt["attention_mask"],
                max_new_tokens=min(max_tokens, room),
                eos_token_id=end,
                pad_token_id=end,
                **sampling,
            )
        new = output[0, n_prompt:]
        stopped = len(new) > 0 and int(new[-1]) == end
        text = str(self.tokenizer.decode(new, skip_special_tokens=True))
        return Generated(text, n_prompt, len(new), "stop" if stopped else "length")


class ModelServer:
    """Serve a `Generator` (a `ChatModel`) on 127.0.0.1 in a background thread; use as a
    context manager."""

    def __init__(self, chat: Generator, *, name: str, port: int = 0, host: str = "127.0.0.1") -> None:
        self.chat = chat
        self.name = name
        self.requests = 0
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host if isinstance(host, str) else host.decode()}:{port}/v1"

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The HTTP status and body for one Chat Completions request."""
        from coworkenv.small_model import parse_tool_calls

        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, _error("`messages` must be a non-empty list")
        max_tokens = request.get("max_completion_tokens") or request.get("max_tokens") or DEFAULT_MAX_TOKENS
        try:
            generated = self.chat.generate(
                messages,
                request.get("tools"),
                max_tokens=int(max_tokens),
                temperature=float(request.get("temperature") or 0.0),
                seed=int(request.get("seed") or 0),
            )
        except PromptTooLong as exc:
            return 400, _error(str(exc), code="context_length_exceeded")
        parsed = parse_tool_calls(generated.text)
        self.requests += 1
        entry: dict[str, Any] = {
            "content": parsed.content or None,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in parsed.tool_calls],
        }
        if generated.finish_reason == "length":
            entry["finish_reason"] = "length"
        body = completion(entry, request.get("model") or self.name, self.requests)
        body["usage"] = {
            "prompt_tokens": generated.prompt_tokens,
            "completion_tokens": generated.completion_tokens,
            "total_tokens": generated.prompt_tokens + generated.completion_tokens,
        }
        return 200, body

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:
                if not self.path.rstrip("/").endswith("/models"):
                    self._send(404, _error(f"no route {self.path}"))
                    return
                model = {"id": server.name, "object": "model", "created": 0, "owned_by": "coworkenv"}
                self._send(200, {"object": "list", "data": [model]})

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, _error(f"no route {self.path}"))
                    return
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except ValueError as exc:
                    self._send(400, _error(f"the request body is not JSON: {exc}"))
                    return
                self._send(*server.answer(request))

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _error(message: str, *, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def main(argv: list[str] | None = None) -> None:
    """Serve `base` (the wheel's model) or a saved model folder until interrupted."""
    from coworkenv.small_model import MODEL_NAME, load

    parser = argparse.ArgumentParser(
        prog="python -m coworkenv.rollout.agents.model_server", description=main.__doc__
    )
    parser.add_argument("--model", default="base", help="`base` or the folder of a saved model")
    parser.add_argument("--name", default=MODEL_NAME, help="model name the endpoint lists")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--dtype",
        choices=("bfloat16", "float32"),
        default="bfloat16",
        help="weights' type while serving (bfloat16 is several times faster on CPUs with AMX or AVX-512 BF16)",
    )
    args = parser.parse_args(argv)
    model: Any
    model, tokenizer = load(args.model)
    if args.dtype == "bfloat16":
        import torch

        model = model.to(dtype=torch.bfloat16)
    with ModelServer(ChatModel(model, tokenizer), name=args.name, port=args.port) as server:
        print(f"serving {args.model} as {args.name} at {server.base_url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
