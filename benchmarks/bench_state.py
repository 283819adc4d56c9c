"""Fork and restore of the demo workspace against raw sqlite3 serialize/deserialize."""

import sqlite3

from coworkenv.servers.render import northwind_workspace

from .timing import median_us, report


def run() -> list[dict]:
    ws = northwind_workspace(seed=0)
    snapshot = ws.snapshot()
    data = snapshot.data
    print(f"demo workspace: {len(data) / 1e6:.2f} MB, hash {ws.content_hash()[:12]}")

    def raw_round_trip() -> None:
        copy = sqlite3.connect(":memory:")
        copy.deserialize(ws.conn.serialize())
        copy.close()

    def raw_deserialize() -> None:
        copy = sqlite3.connect(":memory:")
        copy.deserialize(data)
        copy.close()

    def fork() -> None:
        ws.fork().close()

    def reset() -> None:
        snapshot.fork().close()

    results = [
        report(
            "Workspace.fork() (snapshot + fork)",
            median_us(fork),
            median_us(raw_round_trip),
            "raw serialize + deserialize",
            1.5,
        ),
        report(
            "Snapshot.fork() (episode reset)",
            median_us(reset),
            median_us(raw_deserialize),
            "raw deserialize",
            1.5,
        ),
    ]
    hash_us = median_us(ws.content_hash, repeat=50, warmup=3)
    print(f"{'content_hash() of the demo workspace':<44} {hash_us:9.1f} us")
    return results
