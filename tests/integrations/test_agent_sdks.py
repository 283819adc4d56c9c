"""Agent SDKs against `coworkenv serve`, over stdio and streamable HTTP: pydantic-ai and the
OpenAI Agents SDK (the official MCP SDK's client is tested in tests/test_transports.py).
Models are scripted: pydantic-ai's FunctionModel, and a local OpenAI-compatible server."""

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

pytest.importorskip("pydantic_ai", reason="the agent SDK tests need the [agents] extra")
pytest.importorskip("agents", reason="the agent SDK tests need the [agents] extra")

from agents import Agent as OpenAIAgent
from agents import OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
from fastmcp.client import Client
from fastmcp.client.transports import StdioTransport
from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.servers import apply_world_operation, create_workspace

# The SDKs warn about their own deprecations; what the agents did is what is checked.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
MISSING = "Error executing tool get_person: no person with email 'bob@acme.example'; use search_people to find the right address"


@pytest.fixture
def workspace_file(tmp_path: Path) -> Path:
    ws = create_workspace(["directory"], clock_start=datetime(2026, 3, 2, 9, tzinfo=UTC))
    apply_world_operation(ws, "directory", "add_team", {"name": "Sales"})
    apply_world_operation(
        ws, "directory", "add_person", {"email": "ann@acme.example", "name": "Ann Lee", "team": "Sales"}
    )
    return ws.save(tmp_path / "ws.db")


def stdio_command(db: Path) -> list[str]:
    return [sys.executable, "-m", "coworkenv", "serve", "--service", "directory", "--db", str(db)]


@pytest.fixture
def http_url(workspace_file: Path) -> Iterator[str]:
    """`coworkenv serve --transport http` on a free port; the directory service's URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "coworkenv",
        "serve",
        "--transport",
        "http",
        "--port",
        str(port),
        "--db",
        str(workspace_file),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/directory/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def two_misses_then_search(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A scripted model: two lookups of people who do not exist, a search, then the answer."""
    step = len(messages) // 2
    if step == 0:
        return ModelResponse(parts=[ToolCallPart("get_person", {"email": "bob@acme.example"})])
    if step == 1:
        return ModelResponse(parts=[ToolCallPart("get_person", {"email": "carl@acme.example"})])
    if step == 2:
        return ModelResponse(parts=[ToolCallPart("search_people", {"query": "ann"})])
    return ModelResponse(parts=[TextPart("Ann Lee is in Sales.")])


async def test_pydantic_ai_gives_up_after_a_second_tool_error_unless_max_retries_is_raised(
    workspace_file: Path,
) -> None:
    with anyio.fail_after(60):
        default = MCPToolset(
            Client(StdioTransport(command=sys.executable, args=stdio_command(workspace_file)[1:]))
        )
        agent = Agent(FunctionModel(two_misses_then_search), toolsets=[default])
        async with agent:
            with pytest.raises(
                UnexpectedModelBehavior, match="Tool 'get_person' exceeded max retries count of 1"
            ):
                await agent.run("Who is Ann?")
        patient = MCPToolset(
            Client(StdioTransport(command=sys.executable, args=stdio_command(workspace_file)[1:])),
            max_retries=3,
        )
        agent = Agent(FunctionModel(two_misses_then_search), toolsets=[patient])
        async with agent:
            result = await agent.run("Who is Ann?")
    assert result.output == "Ann Lee is in Sales."
    returned = [
        str(p.content) for m in result.all_messages() for p in m.parts if p.part_kind == "tool-return"
    ]
    assert returned[0] == MISSING
    assert "ann@acme.example" in returned[2]


async def test_pydantic_ai_over_http(http_url: str) -> None:
    def search_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            assert [t.name for t in info.function_tools] == [
                "search_people",
                "get_person",
                "list_teams",
                "list_team",
            ]
            return ModelResponse(parts=[ToolCallPart("search_people", {"query": "ann"})])
        return ModelResponse(parts=[TextPart("Ann Lee is in Sales.")])

    with anyio.fail_after(60):
        agent = Agent(FunctionModel(search_then_answer), toolsets=[MCPToolset(http_url)])
        async with agent:
            result = await agent.run("Who is Ann?")
    returned = [
        str(p.content) for m in result.all_messages() for p in m.parts if p.part_kind == "tool-return"
    ]
    assert result.output == "Ann Lee is in Sales." and "ann@acme.example" in returned[0]


SCRIPT = [
    {"tool_calls": [{"name": "get_person", "arguments": {"email": "bob@acme.example"}}]},
    {"tool_calls": [{"name": "search_people", "arguments": {"query": "ann"}}]},
    {"content": "Ann Lee is in Sales."},
]


async def run_openai_agent(server: MCPServerStdio | MCPServerStreamableHttp) -> tuple[str, list[str]]:
    set_tracing_disabled(True)
    with ScriptedLLM(SCRIPT) as llm:
        model = OpenAIChatCompletionsModel(
            model="scripted", openai_client=AsyncOpenAI(base_url=llm.base_url, api_key="x")
        )
        async with server:
            result = await Runner.run(
                OpenAIAgent(name="assistant", model=model, mcp_servers=[server]), "Who is Ann?"
            )
        tool_texts = [str(m["content"]) for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
    return str(result.final_output), tool_texts


async def test_the_openai_agents_sdk_over_stdio_reads_the_tool_error_and_recovers(
    workspace_file: Path,
) -> None:
    command = stdio_command(workspace_file)
    with anyio.fail_after(60):
        output, tool_texts = await run_openai_agent(
            MCPServerStdio(params={"command": command[0], "args": command[1:]})
        )
    assert output == "Ann Lee is in Sales."
    assert MISSING in tool_texts[0]
    assert "ann@acme.example" in tool_texts[1]


async def test_the_openai_agents_sdk_over_http(http_url: str) -> None:
    with anyio.fail_after(60):
        output, tool_texts = await run_openai_agent(MCPServerStreamableHttp(params={"url": http_url}))
    assert output == "Ann Lee is in Sales."
    assert (MISSING in tool_texts[0], "ann@acme.example" in tool_texts[1]) == (True, True)
