"""The snippets of docs/integrations.md that need an extra (verl, SkyRL, the OpenAI Agents
SDK) run as written, as scripts, in a folder with the example tasks where a checkout has
them. tests/test_docs.py runs the others; in a venv without the extras it skips these."""

import importlib.util
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
