"""Run every benchmark: `python -m benchmarks` (or `make bench`); `python -m benchmarks state`
runs one group (state, tools, services, memory, episodes, validation, scale, rollout, synth,
worlds, documents)."""

import sys

from benchmarks import (
    bench_documents,
    bench_episodes,
    bench_memory,
    bench_rollout,
    bench_scale,
    bench_services,
    bench_state,
    bench_synth,
    bench_tools,
    bench_validation,
    bench_worlds,
)

GROUPS = {
    "state": bench_state.run,
    "tools": bench_tools.run,
    "services": bench_services.run,
    "memory": bench_memory.run,
    "episodes": bench_episodes.run,
    "validation": bench_validation.run,
    "scale": bench_scale.run,
    "rollout": bench_rollout.run,
    "synth": bench_synth.run,
    "worlds": bench_worlds.run,
    "documents": bench_documents.run,
}


def main() -> None:
    chosen = sys.argv[1:] or list(GROUPS)
    for name in chosen:
        print(f"\n== {name} ==")
        GROUPS[name]()


if __name__ == "__main__":
    main()
