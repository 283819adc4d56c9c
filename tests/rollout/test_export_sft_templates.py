"""SFT rows load into the chat templates of five model families as they are. The templates
are written here in Jinja, each keeping how its family renders tool calls (no hub)."""

import json
from typing import Any

import anyio
import pytest

jinja2 = pytest.importorskip("jinja2", reason="rendering chat templates needs jinja2 (the [trl] extra)")
from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: E402

from coworkenv.rollout import OraclePolicy, run_episode  # noqa: E402
from coworkenv.rollout.exports.export_sft import openai_messages, to_trl_row  # noqa: E402
from tests.rollout.test_runner import ticket_task  # noqa: E402

TOOLS = "{%- for tool in tools %}{{ tool | tojson }}\n{% endfor %}"

# Qwen2.5: the call is JSON built around `arguments | tojson` (a string is encoded twice).
QWEN2_5 = (
    "<|im_start|>system\n" + TOOLS + "<|im_end|>\n"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}<|im_start|>assistant\n{{ m.content }}"
    "{%- for tc in m.tool_calls or [] %}<tool_call>\n"
    '{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}\n</tool_call>'
    "{%- endfor %}<|im_end|>\n"
    "{%- elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{%- else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endif %}{%- endfor %}"
)

# Llama 3.x: `parameters` is `arguments | tojson`; results come back as `ipython`.
LLAMA3 = (
    "<|start_header_id|>system<|end_header_id|>\n" + TOOLS + "<|eot_id|>"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' and m.tool_calls %}"
    "{%- for tc in m.tool_calls %}<|start_header_id|>assistant<|end_header_id|>\n"
    '{"name": "{{ tc.function.name }}", "parameters": {{ tc.function.arguments | tojson }}}<|eot_id|>'
    "{%- endfor %}"
    "{%- elif m.role == 'tool' %}<|start_header_id|>ipython<|end_header_id|>\n{{ m.content }}<|eot_id|>"
    "{%- else %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n{{ m.content }}<|eot_id|>{%- endif %}"
    "{%- endfor %}"
)

# GLM-4: one key/value pair per argument, read with `.items()` (a string has none).
GLM4 = (
    "[gMASK]<sop><|system|>\n" + TOOLS + "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}<|assistant|>\n{{ m.content }}"
    "{%- for tc in m.tool_calls or [] %}<tool_call>{{ tc.function.name }}"
    "{%- for k, v in tc.function.arguments.items() %}"
    "<arg_key>{{ k }}</arg_key><arg_value>{{ v if v is string else v | tojson }}</arg_value>"
    "{%- endfor %}</tool_call>{%- endfor %}"
    "{%- elif m.role == 'tool' %}<|observation|>\n<tool_response>{{ m.content }}</tool_response>"
    "{%- else %}<|{{ m.role }}|>\n{{ m.content }}{%- endif %}{%- endfor %}"
)

# Qwen3.5: XML parameters from `arguments | items` (a string is refused).
QWEN3_5 = (
    "<|im_start|>system\n<tools>\n" + TOOLS + "</tools><|im_end|>\n"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}<|im_start|>assistant\n{{ m.content | trim }}"
    "{%- for tc in m.tool_calls or [] %}\n<tool_call>\n<function={{ tc.function.name }}>\n"
    "{%- for k, v in tc.function.arguments | items %}<parameter={{ k }}>\n"
    "{{ v if v is string else v | tojson }}\n</parameter>\n{%- endfor %}</function>\n</tool_call>"
    "{%- endfor %}<|im_end|>\n"
    "{%- elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{%- else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endif %}{%- endfor %}"
)

# DeepSeek-V3: string concatenation throughout: content must be a string, and so must
# `arguments` (the family wants `arguments="string"`).
DEEPSEEK_V3 = (
    "{{ bos_token }}" + TOOLS + "{%- for m in messages %}"
    "{%- if m.role == 'user' %}{{ '<｜User｜>' + m.content }}"
    "{%- elif m.role == 'assistant' and m.tool_calls %}{{ '<｜Assistant｜>' + m.content + '<｜tool▁calls▁begin｜>' }}"
    "{%- for tc in m.tool_calls %}"
    "{{ '<｜tool▁call▁begin｜>function<｜tool▁sep｜>' + tc.function.name + '\\n```json\\n' + tc.function.arguments"
    " + '\\n```<｜tool▁call▁end｜>' }}{%- endfor %}{{ '<｜tool▁calls▁end｜><｜end▁of▁sentence｜>' }}"
    "{%- elif m.role == 'assistant' %}{{ '<｜Assistant｜>' + m.content + '<｜end▁of▁sentence｜>' }}"
    "{%- elif m.role == 'tool' %}{{ '<｜tool▁output▁begin｜>' + m.content + '<｜tool▁output▁end｜>' }}"
    "{%- else %}{{ m.content }}{%- endif %}{%- endfor %}"
)

# gpt-oss: each parameter as TypeScript-like text; an enum's default is concatenated as text.
GPT_OSS = (
    "{%- for tool in tools %}type {{ tool.function.name }} = (_: {\n"
    "{%- for name, spec in tool.function.parameters.properties.items() %}"
    "{{ name }}?: {% if spec.enum %}{{ '\"' + spec.enum | join('\" | \"') + '\"' }}"
    "{% if spec.default is defined %}{{ ', // default: ' + spec.default }}{% endif %}"
    "{% else %}{{ spec.type | default('any') }}{% endif %},\n"
    "{%- endfor %}}) => any;\n{%- endfor %}"
)

TEMPLATES = {
    "qwen2.5": QWEN2_5,
    "llama3": LLAMA3,
    "glm4": GLM4,
    "qwen3.5": QWEN3_5,
    "deepseek-v3": DEEPSEEK_V3,
}


def render(template: str, row: dict[str, Any]) -> str:
    """Render a row the way transformers does: a sandbox, and a `tojson` that does not escape."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False)
    return env.from_string(template).render(messages=row["messages"], tools=row["tools"], bos_token="<s>")


@pytest.fixture(scope="module")
def record():  # type: ignore[no-untyped-def]
    return anyio.run(lambda: run_episode(ticket_task(), OraclePolicy()))


@pytest.mark.parametrize("family", ["qwen2.5", "llama3", "glm4", "qwen3.5"])
def test_object_arguments_render_once_encoded_in_every_family_that_serializes_them(record, family) -> None:  # type: ignore[no-untyped-def]
    row = to_trl_row(record)
    text = render(TEMPLATES[family], row)
    for tool in row["tools"]:
        assert json.dumps(tool, ensure_ascii=False) in text
    expected = {
        "qwen2.5": '{"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "priority": "urgent"}}',
        "llama3": '{"name": "tickets_update_ticket", "parameters": {"ticket_id": 1, "priority": "urgent"}}',
        "glm4": "<tool_call>tickets_update_ticket<arg_key>ticket_id</arg_key><arg_value>1</arg_value>"
        "<arg_key>priority</arg_key><arg_value>urgent</arg_value></tool_call>",
        "qwen3.5": "<function=tickets_update_ticket><parameter=ticket_id>\n1\n</parameter>"
        "<parameter=priority>\nurgent\n</parameter></function>",
    }[family]
    assert expected in text
    assert '\\"ticket_id\\"' not in text  # nothing encoded twice
    assert "None" not in text


def test_string_arguments_are_encoded_twice_by_qwen_and_refused_by_glm4_and_qwen3_5(record) -> None:  # type: ignore[no-untyped-def]
    row = to_trl_row(record, arguments="string")
    assert '"arguments": "{\\"ticket_id\\": 1, \\"priority\\": \\"urgent\\"}"' in render(QWEN2_5, row)
    with pytest.raises(jinja2.UndefinedError):
        render(GLM4, row)
    with pytest.raises(TypeError, match="mapping"):
        render(QWEN3_5, row)


def test_deepseek_v3_renders_string_arguments_and_needs_empty_content_not_null(record) -> None:  # type: ignore[no-untyped-def]
    row = to_trl_row(record, arguments="string")
    text = render(DEEPSEEK_V3, row)
    assert (
        "<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>tickets_update_ticket\n"
        '```json\n{"ticket_id": 1, "priority": "urgent"}\n```<｜tool▁call▁end｜>'
    ) in text
    with_nulls = {**row, "messages": openai_messages(record, arguments="string", empty_content=None)}
    with pytest.raises(TypeError):
        render(DEEPSEEK_V3, with_nulls)


def test_enum_defaults_that_are_numbers_move_into_the_description_so_gpt_oss_renders_them() -> None:
    from coworkenv.rollout.agents.tool_schemas import tools_for_services
    from coworkenv.rollout.exports.export_sft import export_tools

    raw = {"messages": [], "tools": tools_for_services(["calendar"])}
    with pytest.raises(TypeError, match="concatenate"):
        render(GPT_OSS, raw)
    tidy = export_tools(["calendar"])
    text = render(GPT_OSS, {"messages": [], "tools": tidy})
    assert 'granularity_minutes?: "15" | "30" | "60",' in text
    free_slots = next(t["function"] for t in tidy if t["function"]["name"] == "calendar_find_free_slots")
    spec = free_slots["parameters"]["properties"]["granularity_minutes"]
    assert "default" not in spec and spec["description"].endswith("(default: 30)")
    assert spec["enum"] == [15, 30, 60]
