"""Memory of 1,000 idle forks of the demo workspace in one process."""

import gc

from coworkenv.servers.render import northwind_workspace

FORKS = 1000
LIMIT_MB = 2048


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def run() -> dict:
    snapshot = northwind_workspace(seed=0).snapshot()
    gc.collect()
    before = rss_mb()
    forks = [snapshot.fork() for _ in range(FORKS)]
    gc.collect()
    used = rss_mb() - before
    verdict = "met" if used < LIMIT_MB else "MISSED"
    print(
        f"{FORKS} idle forks: {used:.0f} MB ({used / FORKS:.2f} MB each; snapshot {len(snapshot.data) / 1e6:.2f} MB)"
        f"  (target < {LIMIT_MB} MB: {verdict})"
    )
    for ws in forks:
        ws.close()
    return {"forks": FORKS, "rss_mb": used}
