"""The plan of a synthesis run: which kind of task, capability, family and world fills each slot.

Slots get a kind by the mix's shares (`single`, `multi`, `workday`: see `Mix`), then a
capability that has a family of that kind (round robin), then one of those families (round
robin), and a difficulty that cycles easy/medium/hard per family. A slot whose family runs on
every world (`Family.worlds`) gets the next world of `world_plan` (the generated
organizations first, the demo company last); any other slot stays on the demo company.
Every choice depends on the slot number and the seed only, so the plan of a short run is
the start of the plan of a longer one.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from coworkenv.servers import SERVICE_NAMES
from coworkenv.synth.capabilities import load_capabilities
from coworkenv.synth.family import FAMILIES, KINDS, Kind
from coworkenv.synth.generators import DraftRequest
from coworkenv.worlds import DEMO, MAX_SIZE, MIN_SIZE, PROFILES

DEFAULT_WORLDS = 50
"""Worlds of a default run: 49 generated organizations (every industry profile at least once)
and the demo company, so a run of 100 world-ready slots touches every industry and one of 200
puts about four slots on each world."""

_SIZE_BANDS = 5
"""Sizes are drawn in bands of equal width on a log scale, one band after the other, so every
stretch of 8..300 people comes up within a few worlds."""


@dataclass(frozen=True)
class Mix:
    """Shares of the slots by kind. A strict mix (one the user wrote) is an error when a kind
    it asks for has no family among the requested capabilities; the default mix gives such a
    kind's share to the nearest kind that has families (workday <-> multi, then single)."""

    shares: dict[Kind, float] = field(default_factory=dict)
    strict: bool = True

    def text(self) -> str:
        """The mix as `--mix` takes it, e.g. `single=0.6,multi=0.2,workday=0.2`."""
        return ",".join(f"{k}={self.shares.get(k, 0.0):g}" for k in KINDS)


DEFAULT_MIX = Mix({"single": 0.60, "multi": 0.20, "workday": 0.20}, strict=False)
"""40% multi-turn tasks (multi plus workday) by default."""

_FALLBACK: dict[Kind, tuple[Kind, ...]] = {
    "single": ("multi", "workday"),
    "multi": ("workday", "single"),
    "workday": ("multi", "single"),
}


class PlanError(ValueError):
    """A plan that cannot be made: an unknown capability, a bad mix, a kind with no family."""


def parse_mix(text: str) -> Mix:
    """`single=0.40,multi=0.35,workday=0.25` as a strict `Mix`. Shares are weights: they are
    divided by their sum (so `single=2,multi=1` gives two thirds single); an unnamed kind gets
    none."""
    shares: dict[Kind, float] = {}
    for part in text.split(","):
        name, sep, value = part.strip().partition("=")
        name = name.strip()
        if not sep:
            raise PlanError(f"--mix takes KIND=SHARE pairs separated by commas; got {part.strip()!r}")
        kind = next((k for k in KINDS if k == name), None)
        if kind is None:
            raise PlanError(f"--mix: unknown kind {name!r}; kinds: {', '.join(KINDS)}")
        if kind in shares:
            raise PlanError(f"--mix names {kind!r} twice")
        try:
            share = float(value)
        except ValueError:
            raise PlanError(f"--mix: the share of {kind} must be a number; got {value.strip()!r}") from None
        if not math.isfinite(share) or share < 0:
            raise PlanError(f"--mix: the share of {kind} must be 0 or more; got {value.strip()}")
        shares[kind] = share
    total = sum(shares.values())
    if total <= 0:
        raise PlanError("--mix: at least one share must be above 0")
    return Mix({k: shares.get(k, 0.0) / total for k in KINDS}, strict=True)


def world_plan(count: int, seed: int) -> list[str]:
    """`count` worlds as `NAME[:SIZE:SEED]` specs: the demo company first, then generated
    organizations going round every industry profile (a new shuffled order each round), with
    sizes from 8 to 300 people and world seeds drawn from the synthesis seed."""
    if count < 1:
        raise PlanError(f"--worlds must be at least 1; got {count}")
    rng = random.Random(f"worlds:{seed}")
    specs = [DEMO]
    order: list[str] = []
    low, high = math.log(MIN_SIZE), math.log(MAX_SIZE)
    for i in range(count - 1):
        if not order:
            order = sorted(PROFILES)
            rng.shuffle(order)
        profile = PROFILES[order.pop(0)]
        band = i % _SIZE_BANDS
        lo = low + (high - low) * band / _SIZE_BANDS
        size = round(math.exp(rng.uniform(lo, lo + (high - low) / _SIZE_BANDS)))
        size = max(MIN_SIZE, len(profile.teams) + 2, min(MAX_SIZE, size))
        spec = f"{profile.key}:{size}:{rng.randrange(1000)}"
        while spec in specs:  # the same profile, size and seed would be the same world
            spec = f"{profile.key}:{size}:{rng.randrange(1000)}"
        specs.append(spec)
    return specs


def kinds_of(capability_id: str) -> set[Kind]:
    """The kinds a capability's families build; without families, its turns say."""
    kinds = {f.kind for f in FAMILIES.values() if f.capability == capability_id}
    if kinds:
        return kinds
    return {"multi" if load_capabilities()[capability_id].turns == "multi" else "single"}


def _shares(mix: Mix, capabilities: Sequence[str]) -> dict[Kind, float]:
    """The mix's shares over the kinds the capabilities have; a lenient mix moves a share
    without families to the nearest kind with some."""
    have = {k for c in capabilities for k in kinds_of(c)}
    shares = {k: mix.shares.get(k, 0.0) for k in KINDS}
    for kind in KINDS:
        if shares[kind] <= 0 or kind in have:
            continue
        if mix.strict:
            by_kind = {
                k: sorted(f.name for f in FAMILIES.values() if f.kind == k and f.capability in capabilities)
                for k in KINDS
            }
            raise PlanError(
                f"the mix gives {kind} tasks {shares[kind]:.0%} of the slots, but no family of the "
                f"requested capabilities ({', '.join(capabilities)}) is {kind}; their families by kind: "
                + "; ".join(f"{k}: {', '.join(v) or 'none'}" for k, v in by_kind.items())
                + f"; set {kind}=0 or request a capability that has one"
            )
        to = next((k for k in _FALLBACK[kind] if k in have), None)
        if to is not None:
            shares[to] += shares[kind]
        shares[kind] = 0.0
    return shares


def kind_sequence(count: int, shares: dict[Kind, float]) -> list[Kind]:
    """The kind of each of `count` slots: each slot goes to the kind furthest below its share so
    far (ties in the order single, multi, workday), so every prefix of the plan keeps the mix."""
    assigned = dict.fromkeys(KINDS, 0)
    out: list[Kind] = []
    for slot in range(count):
        kind = max((k for k in KINDS if shares[k] > 0), key=lambda k: shares[k] * (slot + 1) - assigned[k])
        assigned[kind] += 1
        out.append(kind)
    return out


def plan_requests(
    count: int,
    capabilities: list[str] | None,
    seed: int,
    *,
    mix: Mix | None = None,
    worlds: int | None = None,
    families: bool = True,
    world_files: Sequence[str] = (),
) -> list[DraftRequest]:
    """`count` slots by `mix` (default `DEFAULT_MIX`). With `families` (a procedural generator)
    each slot names its family, and with `worlds` (the number of worlds of `world_plan`) each
    slot its world: a world-ready family's slot the next world, any other the demo company.
    `world_files` (world JSON files: proposed or edited worlds) join the worlds, first.
    Without them, slots leave family and world to the generator."""
    known = load_capabilities()
    caps = capabilities or list(known)
    for c in caps:
        if c not in known:
            raise PlanError(f"unknown capability {c!r}; known: {', '.join(known)}")
    shares = _shares(mix or DEFAULT_MIX, caps)
    by_kind = {k: [c for c in caps if k in kinds_of(c)] for k in KINDS}
    cycle = world_plan(worlds, seed) if worlds is not None and families else []
    cycle = cycle[1:] + cycle[:1]  # the generated organizations first, the demo company last
    if world_files and families:
        cycle = [str(Path(f).resolve()) for f in world_files] + (cycle or [DEMO])
    seen_kind = dict.fromkeys(KINDS, 0)
    seen_cap: dict[tuple[Kind, str], int] = {}
    on_worlds = 0
    requests = []
    for slot, kind in enumerate(kind_sequence(count, shares)):
        cap = by_kind[kind][seen_kind[kind] % len(by_kind[kind])]
        seen_kind[kind] += 1
        n = seen_cap.get((kind, cap), 0)
        seen_cap[(kind, cap)] = n + 1
        names = sorted(f.name for f in FAMILIES.values() if f.capability == cap and f.kind == kind)
        fam = names[n % len(names)] if names and families else None
        place: str | None = None
        if cycle:
            if fam is not None and FAMILIES[fam].worlds:
                place = cycle[on_worlds % len(cycle)]
                on_worlds += 1
            else:
                place = DEMO
        width = len(names) or 1
        requests.append(
            DraftRequest(
                slot=slot,
                capability=cap,
                kind=kind,
                family=fam,
                world=place,
                variant=n,
                difficulty=(n // width + n % width) % 3,
                seed=seed,
                # a procedural workday moves between whatever services its requests need
                services=list(SERVICE_NAMES) if fam is not None and kind == "workday" else None,
            )
        )
    return requests
