"""The template a newcomer copies is honest: every service folder has the modules
servers/README.md lists, and `directory/` with the README's write tool added to it builds,
serves it, and answers a broken rule with the domain error's text."""

import importlib.util
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers import SERVICE_NAMES, apply_world_operation, create_workspace, get_service
from coworkenv.servers.toolkit import WorkspaceServer
from tests.conftest import START

SERVERS = Path(__file__).resolve().parents[2] / "servers"
README = (SERVERS / "README.md").read_text()
ROLES = [
    "__init__.py",
    "schema.py",
    "store.py",
    "tools_read.py",
    "tools_write.py",
    "world.py",
    "seed.py",
    "server.py",
]
USER = "ann.lee@acme.example"


def test_the_readme_lists_the_modules_of_a_service_folder() -> None:
    assert re.findall(r"^\| `(\w+\.py)` \|", README, re.M) == ROLES


@pytest.mark.parametrize("name", SERVICE_NAMES)
def test_every_service_folder_has_the_modules_the_readme_lists(name: str) -> None:
    modules = {p.name for p in (SERVERS / name).glob("*.py")}
    assert set(ROLES) <= modules, f"{name}/ lacks {sorted(set(ROLES) - modules)}"
    assert not modules & {"tools.py", "toolset.py", "demo.py", "errors.py"}, name
    for helper in sorted(modules - set(ROLES)):
        assert f"`{helper}`" in README or f"`{name}/{helper}`" in README, (
            f"README does not name {name}/{helper}"
        )
    spec = get_service(name)
    read = importlib.import_module(f"coworkenv.servers.{name}.tools_read").TOOLS
    write = importlib.import_module(f"coworkenv.servers.{name}.tools_write").TOOLS
    assert spec.tools.names == [t.name for t in [*read.defs, *write.defs]]


def readme_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README, flags=re.M | re.S)


@pytest.fixture
def template_with_a_write_tool(tmp_path: Path) -> Iterator[ModuleType]:
    """`directory/` copied as a new service package, with the README's `store.py` function
    added and its `tools_write.py`."""
    store_block, tool_block = (b for b in readme_blocks() if "set_phone" in b)
    folder = tmp_path / "directory_copy"
    shutil.copytree(SERVERS / "directory", folder, ignore=shutil.ignore_patterns("__pycache__"))
    store = folder / "store.py"
    store.write_text(store.read_text() + "\n\n" + store_block)
    (folder / "tools_write.py").write_text(tool_block)
    name = "coworkenv.servers.directory_copy"
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    try:
        spec.loader.exec_module(package)
        yield package
    finally:
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


async def test_the_template_with_the_readme_write_tool_serves_it(
    template_with_a_write_tool: ModuleType,
) -> None:
    service = template_with_a_write_tool.SERVICE
    assert service.tools.names == ["search_people", "get_person", "list_teams", "list_team", "set_my_phone"]
    ws = create_workspace(["directory"], clock_start=START, user_email=USER)
    apply_world_operation(ws, "directory", "add_person", {"email": USER, "name": "Ann Lee"})
    results: list[Any] = []
    with anyio.fail_after(5):
        async with Client(WorkspaceServer(ws, [service], name="copy")) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for phone in ["+49 30  1234567", "12ab"]:
                results.append(await client.call_tool("set_my_phone", {"phone": phone}))
    annotations = tools["set_my_phone"].annotations
    assert annotations is not None and annotations.read_only_hint is False
    ok, bad = results
    assert not ok.is_error and ok.structured_content["phone"] == "+49 30 1234567"
    assert bad.is_error and bad.content[0].text == (
        "Error executing tool set_my_phone: '12ab' is not a phone number; write digits and spaces "
        "with an optional +, like +49 30 1234567"
    )
    assert ws.rows("directory_people", "email = ?", [USER])[0]["phone"] == "+49 30 1234567"
    assert [(e.tool, e.is_error, e.error) for e in ws.audit.entries() if e.actor == "agent"] == [
        ("set_my_phone", False, None),
        ("set_my_phone", True, bad.content[0].text),
    ]


def test_the_template_store_raises_the_domain_error_as_a_value_error(
    template_with_a_write_tool: ModuleType,
) -> None:
    store = sys.modules["coworkenv.servers.directory_copy.store"]
    ws = create_workspace(["directory"], clock_start=START)
    with pytest.raises(ValueError, match=r"no person with email 'x@y\.example'; use search_people"):
        store.set_phone(ws, "x@y.example", "+1 555 0100")
