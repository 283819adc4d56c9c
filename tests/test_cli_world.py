"""`coworkenv world` lists, shows and writes worlds; `serve --world` loads any of them."""

import json
from pathlib import Path

from click.testing import CliRunner

from coworkenv.cli import cli
from coworkenv.cli.options import load_workspace
from coworkenv.servers.render import render_workspace
from coworkenv.worlds import PROFILES, world


def test_world_list_names_the_demo_company_and_every_profile() -> None:
    result = CliRunner().invoke(cli, ["world", "list"])
    assert result.exit_code == 0
    names = [line.split()[0] for line in result.output.splitlines()]
    assert names == ["northwind", *sorted(PROFILES)]
    assert "law_firm               law firm, 40 colleagues, Europe/London, America/New_York" in result.output


def test_world_show_summarizes_and_prints_json() -> None:
    built = world("museum", 12, 1)
    result = CliRunner().invoke(cli, ["world", "show", "museum:12:1"])
    assert result.exit_code == 0
    assert (
        result.output.splitlines()[0]
        == f"{built.name} (art museum), {built.domain}, hash {built.content_hash[:12]}"
    )
    assert "  queue Bookings: 30 tickets, worked by Visitor Services" in result.output
    as_json = CliRunner().invoke(cli, ["world", "show", "museum:12:1", "--json"])
    assert json.loads(as_json.output)["name"] == built.name


def test_world_write_then_serve_world_file_gives_the_same_workspace(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    result = CliRunner().invoke(cli, ["world", "write", "logistics:15:2", str(path)])
    assert result.exit_code == 0 and f"to {path}" in result.output
    again = CliRunner().invoke(cli, ["world", "write", "logistics:15:2", str(path)])
    assert again.exit_code == 2 and "already exists; pass --overwrite" in again.output
    served = load_workspace(None, None, str(path))
    assert served.content_hash() == render_workspace(world("logistics", 15, 2)).content_hash()


def test_serve_refuses_two_sources_and_an_unknown_world() -> None:
    both = CliRunner().invoke(cli, ["serve", "--demo", "--world", "law_firm"])
    assert both.exit_code == 2 and "give one of --db PATH, --demo [SEED] or --world NAME|FILE" in both.output
    unknown = CliRunner().invoke(cli, ["serve", "--world", "moon_base"])
    assert unknown.exit_code == 2 and "no world profile 'moon_base'" in unknown.output
