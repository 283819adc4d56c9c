"""verl: an agent loop that plays one coworkenv episode per trajectory.

    from coworkenv.integrations.verl import dataset_rows, write_agent_loop_config

    pandas.DataFrame(dataset_rows(tasks)).to_parquet("train.parquet")  # data.train_files
    write_agent_loop_config("agent_loops.yaml", tasks=["tasks/examples"])
    # actor_rollout_ref.rollout.agent.agent_loop_config_path=agent_loops.yaml

`CoworkAgentLoop` is a verl `AgentLoopBase` (verl.experimental.agent_loop), named
`coworkenv` in the agent-loop config file that `write_agent_loop_config` writes; the rows
of `dataset_rows` ask for it (`agent_name`) and name their task (`extra_info.task_id`).
For each trajectory, verl makes the loop and calls `run`, which:

- starts a `coworkenv.Episode` on a fresh fork of the task's seed; the prompt is the task's
  system prompt and first user message, with the task's tools (its services' only) given
  to the model's chat template as `tools`;
- generates with verl's server, and reads the tool calls out of the reply with verl's tool
  parser for the chat template (`actor_rollout_ref.rollout.multi_turn.format`: `hermes` for
  Qwen, `gpt-oss`, `qwen3_coder`, ...). Each call runs through the episode (audited, the
  turn's tool limit and any faults apply); its result goes back as a `tool` message;
- takes a reply without tool calls as the answer to the user: a question may be answered
  within the turn, otherwise the turn is judged, the next turn's events are applied and its
  user message follows, until the last turn;
- stops at the last turn, at `multi_turn.max_assistant_turns` replies or when the response
  reaches `response_length` tokens (the episode is then judged as it stands), and returns
  the verdict's score as `reward_score`, with the named rewards (`Episode.rewards()`) as
  `reward_extra_info`. Tool results and user turns are masked out of the loss.

With `records_dir`, each episode's `EpisodeRecord` is appended there. An episode with no
verdict (its checks could not run) raises `UnscoredEpisode`: verl would count a made-up
0.0 in its group's statistics.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput
from verl.experimental.agent_loop.tool_parser import FunctionCall, ToolParser

from coworkenv.rollout.episodes.episode import Episode
from coworkenv.rollout.episodes.records_io import append_record
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.task import Task

from .task_sets import task_set
from .text_episode import TextEpisode, UnscoredEpisode
from .tool_text import ParsedText, ToolCall, parse_tool_calls

__all__ = ["AGENT_NAME", "CoworkAgentLoop", "dataset_rows", "write_agent_loop_config"]

AGENT_NAME = "coworkenv"
POLICY_NAME = "verl"


def write_agent_loop_config(
    path: str | Path,
    *,
    tasks: Iterable[str | Path],
    seed: int = 0,
    records_dir: str | Path | None = None,
    max_result_chars: int | None = None,
    name: str = AGENT_NAME,
) -> Path:
    """Write verl's agent-loop config file (for `rollout.agent.agent_loop_config_path`)
    that names `CoworkAgentLoop` `name`, over these task files and folders. With
    `max_result_chars`, each tool result the model reads is cut to that many characters,
    with a note on how to page."""
    entry: dict[str, Any] = {
        "name": name,
        "_target_": f"{__name__}.CoworkAgentLoop",
        "tasks": [str(Path(p).resolve()) for p in tasks],
        "seed": seed,
    }
    if records_dir is not None:
        entry["records_dir"] = str(Path(records_dir).resolve())
    if max_result_chars is not None:
        entry["max_result_chars"] = max_result_chars
    out = Path(path)
    out.write_text(json.dumps([entry], indent=2) + "\n")  # JSON is YAML: verl reads it with OmegaConf
    return out


def dataset_rows(tasks: Iterable[Task], *, name: str = AGENT_NAME) -> list[dict[str, Any]]:
    """One verl RL-dataset row per task: the prompt (system prompt and first user message),
    the agent loop's name and the task id. The tools are not in the prompt: the loop gives
    them to the chat template."""
    cache = SeedCache()
    rows = []
    for index, task in enumerate(tasks):
        episode = Episode(task, cache=cache)
        start = episode.reset()
        episode.close()
        rows.append(
            {
                "data_source": "coworkenv",
                "prompt": [
                    {"role": "system", "content": start.system_prompt},
                    {"role": "user", "content": start.user_message},
                ],
                "agent_name": name,
                "extra_info": {"task_id": task.id, "index": index},
            }
        )
    return rows


class CoworkAgentLoop(AgentLoopBase):
    """One coworkenv episode per trajectory. See the module docstring."""

    def __init__(
        self,
        *args: Any,
        tasks: Iterable[str],
        seed: int = 0,
        records_dir: str | None = None,
        max_result_chars: int | None = None,
        tools: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.tasks = task_set(list(tasks))
        self.seed = seed
        self.records_dir = records_dir
        self.max_result_chars = max_result_chars
        multi_turn = self.rollout_config.multi_turn
        self.tool_parser = ToolParser.get_tool_parser(multi_turn.format, self.tokenizer)
        self.max_replies = multi_turn.max_assistant_turns or None
        self.response_length = self.rollout_config.response_length

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Play the episode of the row's task (`extra_info.task_id`) and score it."""
        extra_info = kwargs.get("extra_info") or {}
        task = self.tasks.task(extra_info.get("task_id"))
        episode = Episode(
            task,
            trial=self.tasks.next_trial(task.id),
            seed=self.seed,
            cache=self.tasks.cache,
            policy=POLICY_NAME,
        )
        text_episode = TextEpisode(
            episode,
            max_steps=self.max_replies,
            tools_in_prompt=False,
            max_result_chars=self.max_result_chars,
        )
        messages: list[dict[str, Any]] = list(await text_episode.areset())
        assert text_episode.start is not None
        tools = text_episode.start.openai_tools
        token_ids = await self.ct_build_initial_tokens(messages, tools=tools)
        mask: list[int] = []
        logprobs: list[float] = []
        request_id = uuid4().hex
        if self.tool_parser.stop_token_ids:  # formats whose models go on after a call (Gemma 4, Kimi)
            stops = {*(sampling_params.get("stop_token_ids") or []), *self.tool_parser.stop_token_ids}
            sampling_params = {**sampling_params, "stop_token_ids": sorted(stops)}
        while True:
            output = await self.server_manager.generate(
                request_id=request_id, prompt_ids=token_ids, sampling_params=sampling_params
            )
            merged, mask, merged_logprobs = await self.ct_merge_assistant_token(
                token_ids,
                output.token_ids,
                mask,
                logprobs if (logprobs or output.log_probs) else None,
                assistant_logprobs=output.log_probs or None,
            )
            token_ids, logprobs = merged.token_ids, merged_logprobs or []
            if len(mask) >= self.response_length:
                break  # no room to answer: judged as it stands
            parsed = await self._parse(output.token_ids)
            step = await text_episode.astep(parsed)
            if step.done:
                break
            reply = _assistant_message(parsed)
            messages.append(reply)
            previous = list(messages)
            messages += step.observation
            merged, observed_mask, observed_logprobs = await self.ct_merge_context_msg(
                previous, messages, token_ids, mask, logprobs or None, tools=tools
            )
            if len(observed_mask) >= self.response_length:
                break
            token_ids, mask, logprobs = merged.token_ids, observed_mask, observed_logprobs or []
        return await self._finish(text_episode, token_ids, mask, logprobs)

    async def _parse(self, reply_ids: list[int]) -> ParsedText:
        """The reply's tool calls, read by verl's parser for the chat template, and its
        answer to the user (the text without special tokens, reasoning and calls). verl's
        parsers drop a call they cannot read: a Hermes block that none of them read is
        still a call, whose error the model is told, not an answer to the user."""
        _, found = await self.tool_parser.extract_tool_calls(reply_ids, None)
        tokenizer: Any = self.tokenizer  # a transformers tokenizer (verl types it loosely)
        own = parse_tool_calls(tokenizer.decode(reply_ids, skip_special_tokens=True))
        return ParsedText(content=own.content, calls=[_tool_call(c) for c in found] or own.calls)

    async def _finish(
        self,
        text_episode: TextEpisode,
        token_ids: list[int],
        mask: list[int],
        logprobs: list[float],
    ) -> AgentLoopOutput:
        episode = text_episode.episode
        verdict = await episode.averdict()
        record = await episode.arecord()
        if self.records_dir is not None:
            append_record(self.records_dir, record)
        episode.close()
        if verdict is None:
            raise UnscoredEpisode(f"episode of {episode.task.id} has no verdict: {record.error}")
        prompt_ids = token_ids[: len(token_ids) - len(mask)]
        response_ids = token_ids[len(prompt_ids) :]
        rewards = episode.rewards()
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[: self.response_length],
            response_mask=mask[: self.response_length],
            response_logprobs=logprobs[: self.response_length] if logprobs else None,
            reward_score=float(verdict.score),
            num_turns=len(text_episode.messages),
            metrics=AgentLoopMetrics(),
            extra_fields={
                "reward_extra_info": rewards,
                "turn_scores": [float(t.success) for t in verdict.turns],
                "tool_rewards": [],
            },
        )


def _tool_call(call: FunctionCall) -> ToolCall:
    """A call read by verl's parser (arguments as a JSON string) as one of ours."""
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError as exc:
        return ToolCall(call.name, error=f"the arguments of {call.name} are not valid JSON ({exc.msg})")
    if not isinstance(arguments, dict):
        return ToolCall(call.name, error=f'the "arguments" of {call.name} must be a JSON object')
    return ToolCall(call.name, arguments)


def _assistant_message(parsed: ParsedText) -> dict[str, Any]:
    """The reply as a Chat Completions message, for the chat template to render after it."""
    message: dict[str, Any] = {"role": "assistant", "content": parsed.content}
    if parsed.calls:
        message["tool_calls"] = [
            {"type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in parsed.calls
        ]
    return message
