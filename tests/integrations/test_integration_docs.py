"""The snippets of docs/integrations.md that need an extra (verl, SkyRL, the OpenAI Agents
SDK) run as written, as scripts, in a folder with the example tasks where a checkout has
them. tests/test_docs.py runs the others; in a venv without the extras it skips these."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_docs import ROOT, missing_modules, python_blocks

GUIDE = ROOT / "docs" / "integrations.md"
#: What marks a snippet as one that needs an extra, and the module that extra brings.
EXTRAS = {
    "coworkenv.integrations.verl": "verl",
    "coworkenv.integrations.skyrl": "skyrl_gym",
    "from agents": "agents",
}
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", GUIDE.read_text(), flags=re.M | re.S)
SNIPPETS = [(i, marker) for i, code in enumerate(python_blocks(GUIDE)) for marker in EXTRAS if marker in code]


def test_the_guide_has_a_snippet_for_each_extra() -> None:
    assert sorted(marker for _, marker in SNIPPETS) == sorted(EXTRAS)


@pytest.mark.parametrize(("index", "marker"), SNIPPETS, ids=[EXTRAS[m] for _, m in SNIPPETS])
def test_the_snippet_runs_as_written(index: int, marker: str, tmp_path: Path) -> None:
    code = python_blocks(GUIDE)[index]
    missing = missing_modules(code) | (
        {EXTRAS[marker]} - {m for m in EXTRAS.values() if importlib.util.find_spec(m)}
    )
    if missing:
        pytest.skip(f"the snippet needs an extra: {sorted(missing)} not installed")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "examples").symlink_to(ROOT / "tasks" / "examples")
    script = tmp_path / "snippet.py"
    script.write_text(code)
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip(), "the snippet printed nothing"


#: A user's agent for the command lines: it looks at its tools and answers every turn.
MY_AGENTS = """
from mcp import Client


async def triage(conversation):
    async with Client(conversation.mcp_url) as tools:
        await tools.list_tools()
        message = conversation.prompt
        while message is not None:
            message = await conversation.reply("I have nothing to change.")
"""


def test_the_rollout_mcp_command_lines_run_and_report_the_episodes(tmp_path: Path) -> None:
    (commands,) = [code for language, code in BLOCKS if not language and "rollout-mcp" in code]
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "examples").symlink_to(ROOT / "tasks" / "examples")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "bin").symlink_to(Path(sys.executable).parent)  # the lines say .venv/bin/coworkenv
    (tmp_path / "my_agents.py").write_text(MY_AGENTS)
    outputs = []
    for line in commands.splitlines():
        done = subprocess.run(line, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{line}\n{done.stderr[-3000:]}"
        outputs.append(done.stdout)
    tasks = len(list((ROOT / "tasks" / "examples").glob("*.json")))
    assert f"{2 * tasks} episode(s) run, 0 already done" in outputs[0]
    assert "mcp:my_agents:triage" in outputs[1]
