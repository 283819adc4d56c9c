"""Print pip constraints that pin each base dependency of pyproject.toml to its lower bound;
with `--check`, verify instead that the installed versions are those lower bounds.

`make test-lowest` installs the project with these, so the oldest releases our ranges admit
are tested as well as the newest (which `make test` gets). A dependency without a lower bound
is an error: every range must have a tested floor.
"""

import re
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOWER = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(.*)$")


def lower_bounds(dependencies: list[str]) -> list[str]:
    """`name==floor` for each requirement (`name>=floor,<cap`), in the order given."""
    pins = []
    for requirement in dependencies:
        match = LOWER.match(requirement.split(";")[0])
        assert match is not None, requirement
        name, spec = match.groups()
        floors = [s.strip()[2:].strip() for s in spec.split(",") if s.strip().startswith(">=")]
        if len(floors) != 1:
            raise SystemExit(f"{requirement!r} has no single lower bound (>=)")
        pins.append(f"{name}=={floors[0]}")
    return pins


def release(text: str) -> tuple[int, ...]:
    """`2.0` and `2.0.0` are the same release."""
    numbers = [int(n) for n in text.split(".")]
    while numbers and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def check(pins: list[str]) -> list[str]:
    """The pins whose installed version is not the pinned one."""
    wrong = []
    for pin in pins:
        name, floor = pin.split("==")
        installed = version(name)
        if release(installed) != release(floor):
            wrong.append(f"{name}: {installed} installed, lower bound {floor}")
    return wrong


if __name__ == "__main__":
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = lower_bounds(project["dependencies"])
    if sys.argv[1:] == ["--check"]:
        problems = check(pins)
        print("\n".join(problems or [f"installed at their lower bounds: {', '.join(pins)}"]))
        sys.exit(1 if problems else 0)
    print("\n".join(pins))
