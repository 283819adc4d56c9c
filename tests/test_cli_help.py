"""Every option of every command says what it does in `--help`."""

import click

from coworkenv.cli import cli


def walk(command: click.Command, name: str = "coworkenv") -> list[tuple[str, click.Command]]:
    """The command and everything below it, by full name."""
    found = [(name, command)]
    if isinstance(command, click.Group):
        for sub, child in sorted(command.commands.items()):
            found += walk(child, f"{name} {sub}")
    return found


def test_the_walk_reaches_every_leaf_command() -> None:
    names = [name for name, _ in walk(cli)]
    assert {"coworkenv rollout", "coworkenv serve", "coworkenv export sft", "coworkenv export rl"} <= set(
        names
    )


def test_every_option_of_every_command_has_help_text() -> None:
    missing = [
        f"{name} {param.opts[0]}"
        for name, command in walk(cli)
        for param in command.params
        if isinstance(param, click.Option) and not (param.help or "").strip()
    ]
    assert missing == []


def test_every_command_has_a_docstring() -> None:
    assert [name for name, command in walk(cli) if not (command.help or "").strip()] == []


def test_importing_the_main_module_does_not_run_the_cli() -> None:
    # Worker processes re-import the main module under another name; the CLI must not start there.
    import runpy

    namespace = runpy.run_module("coworkenv.__main__", run_name="__mp_main__")
    assert callable(namespace["main"])
