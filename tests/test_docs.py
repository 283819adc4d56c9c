"""The docs cannot rot: every CLI command is documented in the README, every command line
in the README uses real commands and options, every capability is documented, and every
Python snippet runs."""

import ast
import importlib.util
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import click
import pytest

from coworkenv.cli import cli
from coworkenv.synth.capabilities import load_capabilities

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def commands() -> dict[str, click.Command]:
    """Every leaf command by its full name ("serve", "export sft")."""
    out = {}
    for name, command in cli.commands.items():
        if isinstance(command, click.Group):
            for sub, leaf in command.commands.items():
                out[f"{name} {sub}"] = leaf
        else:
            out[name] = command
    return out


def readme_command_lines() -> list[list[str]]:
    """Our command lines in the README (Inspector lines are left out: their options are its own)."""
    lines = []
    for line in README.splitlines():
        match = re.search(r"coworkenv (.*)", line)
        if match and line.lstrip().startswith((".venv/bin/coworkenv", "coworkenv")):
            text = match.group(1).split("#")[0].replace("&", "").strip()
            lines.append(shlex.split(text))
    return lines


def makefile_targets() -> set[str]:
    """The targets the Makefile defines."""
    text = (ROOT / "Makefile").read_text()
    return {t for line in re.findall(r"^([\w][\w .-]*):(?!=)", text, re.M) for t in line.split()}


def test_the_readme_is_a_short_guide_that_starts_with_make_demo_and_make_test() -> None:
    assert len(README.splitlines()) < 200
    assert "make demo" in README and "make test" in README
    assert "docs/performance.md" in README


def test_every_make_command_in_the_readme_and_the_docs_is_a_real_target() -> None:
    targets = makefile_targets()
    assert {"demo", "test", "bench"} <= targets
    shown = set()
    for doc in DOCS:
        shown |= set(re.findall(r"`make ([\w-]+)", doc.read_text()))
        shown |= set(re.findall(r"^make ([\w-]+) *(?:#.*)?$", doc.read_text(), re.M))  # a command line
    assert {"demo", "test", "bench"} <= shown
    assert shown <= targets, f"the docs show make targets the Makefile lacks: {sorted(shown - targets)}"


def test_the_performance_doc_names_every_benchmark_module_and_group() -> None:
    from benchmarks.__main__ import GROUPS

    doc = (ROOT / "docs" / "performance.md").read_text()
    modules = sorted(p.name for p in (ROOT / "benchmarks").glob("bench_*.py"))
    assert len(modules) == len(GROUPS)
    for module in modules:
        assert f"benchmarks/{module}" in doc, f"docs/performance.md does not describe {module}"
    shown = set(re.findall(r"python -m benchmarks ([\w ]+)", doc))
    for group in GROUPS:
        assert f".venv/bin/python -m benchmarks {group}`" in doc, f"no command for the {group} group"
    for line in shown:
        unknown = set(line.split()) - set(GROUPS)
        assert not unknown, f"docs/performance.md runs unknown benchmark groups: {sorted(unknown)}"


#: How a lab notebook reads: reference docs state what is true now.
NARRATIVE = (
    "this session",
    "slow day",
    "in the same hour",
    "a decision for the team",
    "before these changes",
)


@pytest.mark.parametrize("doc", ["README.md", "docs/performance.md"])
def test_the_guide_and_the_performance_reference_narrate_no_history(doc: str) -> None:
    text = (ROOT / doc).read_text().casefold()
    assert [phrase for phrase in NARRATIVE if phrase in text] == []


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_is_documented_in_the_readme(name: str) -> None:
    assert f"coworkenv {name}" in README, f"README.md never shows `coworkenv {name}`"


def test_every_readme_command_line_uses_real_commands_and_options() -> None:
    known = commands()
    lines = readme_command_lines()
    assert len(lines) >= 15
    for words in lines:
        name = " ".join(words[:2]) if " ".join(words[:2]) in known else words[0]
        assert name in known, f"README shows an unknown command: coworkenv {' '.join(words)}"
        options = {opt for p in known[name].params for opt in p.opts}
        for word in words:
            if word.startswith("--"):
                assert word.split("=")[0] in options, f"`coworkenv {name}` has no option {word}"


def test_every_capability_is_documented() -> None:
    doc = (ROOT / "docs" / "synthesis.md").read_text()
    for capability_id in load_capabilities():
        assert f"`{capability_id}`" in doc, f"docs/synthesis.md does not describe {capability_id}"


# ---- every ```python block in the README and docs/ runs, as a script


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Names a snippet uses but does not define, made by the test before the file's blocks run.
PRELUDES = {
    "sandbox.md": (
        "import sqlite3\n"
        "code = 'def check(**kwargs):\\n    return True\\n'\n"
        "db = sqlite3.connect(':memory:')\n"
        "db.execute('create table t (x)')\n"
        "seed_bytes = final_bytes = db.serialize()\n"
    ),
}
#: Modules whose snippets train or load a model: they would need a download, so they never run here.
NEEDS_A_MODEL = {"trl", "transformers"}


def python_blocks(path: Path) -> list[str]:
    """The ```python blocks of a Markdown file, dedented (a block may sit in a list item)."""
    blocks = re.findall(r"^( *)```python\n(.*?)^\1```", path.read_text(), flags=re.M | re.S)
    return [textwrap.dedent(code) for _, code in blocks]


def missing_modules(code: str) -> set[str]:
    """Top-level modules the code imports that are not installed, or that need a model."""
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return {n for n in names if n in NEEDS_A_MODEL or importlib.util.find_spec(n) is None}


def test_the_docs_have_python_snippets_to_run() -> None:
    counts = {path.name: len(python_blocks(path)) for path in DOCS}
    assert counts["README.md"] == 1
    assert counts["exports.md"] >= 1


def oracle_rollout(folder: Path) -> None:
    """What docs/exports.md starts from: the README's oracle rollout (on three example tasks)."""
    from coworkenv.rollout import OraclePolicy
    from coworkenv.rollout.episodes.batch import run_batch
    from coworkenv.task import load_task

    tasks = [load_task(p) for p in sorted((ROOT / "tasks" / "examples").glob("*.json"))[:3]]
    anyio.run(lambda: run_batch(tasks, OraclePolicy, trials=1, out_dir=folder))


@pytest.mark.parametrize("doc", [p for p in DOCS if python_blocks(p)], ids=lambda p: p.name)
def test_every_python_snippet_runs_as_a_script(doc: Path, tmp_path: Path) -> None:
    if doc.name == "exports.md":
        oracle_rollout(tmp_path / "out" / "teacher")
    ran, skipped = 0, []
    for i, code in enumerate(python_blocks(doc)):
        missing = missing_modules(code)
        if missing:
            skipped.append((i, sorted(missing)))
            continue
        script = tmp_path / f"snippet_{i}.py"
        script.write_text(PRELUDES.get(doc.name, "") + code)
        proc = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, f"{doc.name} python block {i} failed:\n{proc.stderr[-2000:]}"
        ran += 1
    assert ran >= 1, f"no snippet of {doc.name} could run; skipped {skipped}"
    if doc.name == "exports.md":
        # the snippet read real records: every oracle run is a demonstration
        assert len((tmp_path / "out" / "trl" / "sft.jsonl").read_text().splitlines()) == 3
        assert len((tmp_path / "out" / "rl" / "rl.jsonl").read_text().splitlines()) == 3


async def test_the_task_format_example_is_a_task_that_passes_the_whole_contract() -> None:
    import re

    from coworkenv.synth.validation.validation import validate_task
    from coworkenv.task import parse_task

    block = re.search(r"```json\n(.*?)```", (ROOT / "docs" / "tasks.md").read_text(), re.S)
    assert block is not None
    report = await validate_task(parse_task(block.group(1), source="docs/tasks.md"))
    assert report.summary() == "ok"
    assert set(report.kill_rates().values()) == {1.0} and set(report.acceptance_rates().values()) == {1.0}


def test_the_claims_section_shows_checks_that_parse_and_verdicts_the_claims_tests_hold() -> None:
    """The check in "A fact is the text's claim" parses, and each sentence of its table is a
    row of tests/verifiers/test_claims.py with the same verdict."""
    import json
    import re

    from pydantic import TypeAdapter

    from coworkenv.checks import Check
    from tests.verifiers.test_claims import ACCEPTED, REJECTED

    section = (ROOT / "docs" / "tasks.md").read_text().split("#### A fact is the text's claim")[1]
    section = section.split("\n## ")[0]
    snippet = re.search(r"```json\n(.*?)```", section, re.S)
    assert snippet is not None
    check = TypeAdapter(Check).validate_python(json.loads(snippet.group(1)))
    assert [f.number for f in check.context] == [41000]  # type: ignore[union-attr]
    rows = re.findall(r"^\| (.+?) \| .+? \| (.+?) \|$", section, re.M)[2:]  # after the header
    accepted = {r[0] for r in ACCEPTED}
    rejected = {r[0]: r[2] for r in REJECTED}
    assert len(rows) == 7
    for text, verdict in rows:
        if verdict == "stated":
            assert text in accepted
        else:
            assert text in rejected and verdict.split()[-1].casefold() in rejected[text]
