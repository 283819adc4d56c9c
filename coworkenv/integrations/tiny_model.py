"""A tiny random language model for trying a trainer's loop on CPU, with no download.

`tiny_model(tasks)` returns a randomly initialised one-layer Qwen2-shaped model and a
word-level tokenizer whose vocabulary is the words of the tasks' prompts and tool schemas,
with the Qwen3 chat template TRL ships (so TRL can render tools and parse tool calls). It
learns nothing useful: it is for checking that a pipeline runs end to end (rollouts,
rewards, records) before a real model is put in its place. Needs the [trl] extra.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from coworkenv.rollout.agents.tool_schemas import tools_for_services
from coworkenv.task import Task

__all__ = ["tiny_model"]

SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
]


def tiny_model(tasks: Iterable[Task], *, seed: int = 0) -> tuple[Any, Any]:
    """(model, tokenizer): a random one-layer model and a word-level tokenizer for these tasks."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen3_chat_template

    texts = []
    for task in tasks:
        texts.append(json.dumps(tools_for_services(task.services)))
        texts += [turn.user for turn in task.turns]
    words = sorted({w for text in texts for w in re.findall(r"\w+|[^\w\s]+", text)} - set(SPECIAL))
    vocab = {token: i for i, token in enumerate(["[UNK]", *SPECIAL, *words])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        unk_token="[UNK]",
        pad_token="<|endoftext|>",
        eos_token="<|im_end|>",
        additional_special_tokens=SPECIAL[1:],
        padding_side="left",
    )
    tokenizer.chat_template = qwen3_chat_template
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=65536,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return Qwen2ForCausalLM(config), tokenizer
