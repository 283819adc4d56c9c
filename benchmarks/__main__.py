"""Run every benchmark: `python -m benchmarks` (or `make bench`)."""

from . import bench_memory, bench_state, bench_tools


def main() -> None:
    print("== workspace state ==")
    bench_state.run()
    print("\n== tool calls ==")
    bench_tools.run()
    print("\n== memory ==")
    bench_memory.run()


if __name__ == "__main__":
    main()
