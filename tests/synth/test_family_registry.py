"""The family registry: it loads every family module itself on its first lookup (nothing
imports a package to register), names the families when asked for an unknown one, refuses a
name registered twice, and every registered family fits its capability: the services it uses
are among the capability's, so the consistency stage never rejects a family's draft by
construction."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from coworkenv.synth.capabilities import load_capabilities
from coworkenv.synth.family import FAMILIES, Family, FamilyRegistry

FAMILY_FOLDER = Path(__file__).resolve().parents[2] / "synth" / "families"


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_family_uses_only_its_capabilitys_services(name: str) -> None:
    """A workday moves between whatever services its requests need (the plan lets it)."""
    from coworkenv.servers import SERVICE_NAMES

    family = FAMILIES[name]
    allowed = set(load_capabilities()[family.capability].services) | {"directory"}
    if family.kind == "workday":
        allowed = set(SERVICE_NAMES)
    assert set(family.services) <= allowed, f"{name} uses {sorted(set(family.services) - allowed)}"


def test_the_family_modules_are_imported_on_the_first_lookup_not_before() -> None:
    script = (
        "import sys\n"
        "import coworkenv.synth.families\n"
        "from coworkenv.synth.family import FAMILIES\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('coworkenv.synth.families.'))\n"
        "print(loaded())\n"
        "print(FAMILIES['support_day'].kind, len(FAMILIES))\n"
        "print('coworkenv.synth.families.communication.mail_bulk_archive' in loaded())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", f"workday {len(FAMILIES)}", "True"]


def test_every_module_that_registers_a_family_is_in_the_family_package() -> None:
    modules = {fam.build.__module__ for fam in FAMILIES.values()}
    assert all(m.startswith("coworkenv.synth.families.") for m in modules), modules
    written = {
        path for path in FAMILY_FOLDER.rglob("*.py") if "@family(" in path.read_text()
    }  # every file that registers one is loaded
    assert {m.removeprefix("coworkenv.synth.families.").replace(".", "/") + ".py" for m in modules} == {
        str(p.relative_to(FAMILY_FOLDER)) for p in written
    }


def test_an_unknown_family_is_an_error_that_lists_the_families() -> None:
    with pytest.raises(KeyError, match=r"no family 'support_dya'; the families are: .*support_day"):
        FAMILIES["support_dya"]
    assert FAMILIES.get("support_dya") is None
    assert "support_dya" not in FAMILIES


def test_a_name_is_registered_once() -> None:
    registry = FamilyRegistry("coworkenv.synth.families")
    fam = FAMILIES["tickets_escalate"]
    registry.add(fam)
    with pytest.raises(ValueError, match="family 'tickets_escalate' is registered twice"):
        registry.add(Family(fam.name, fam.capability, fam.services, False, fam.build))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_synthesis_module_imports_a_private_name_of_another() -> None:
    """What the families share is public in the module where it belongs; what is private stays
    in its module."""
    found = []
    for path in sorted(FAMILY_FOLDER.parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                private = [a.name for a in node.names if _private(a.name)]
                if private or any(_private(part) for part in module.split(".")):
                    found.append(f"{path.relative_to(FAMILY_FOLDER.parent)}: from {module} import {private}")
    assert found == []
