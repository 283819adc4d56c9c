"""Every registered procedural family fits its capability: the services it uses are among the
capability's, so the consistency stage never rejects a family's draft by construction."""

import pytest

from coworkenv.synth.capabilities import load_capabilities
from coworkenv.synth.family import FAMILIES


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_family_uses_only_its_capabilitys_services(name: str) -> None:
    family = FAMILIES[name]
    allowed = set(load_capabilities()[family.capability].services) | {"directory"}
    assert set(family.services) <= allowed, f"{name} uses {sorted(set(family.services) - allowed)}"
