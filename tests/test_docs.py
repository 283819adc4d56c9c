"""The docs cannot rot: every CLI command is documented in the README, every command line
in the README uses real commands and options, and every capability is documented."""

import re
import shlex
from pathlib import Path

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
