"""The built wheel holds exactly the `coworkenv` package, whose subpackages are the top-level folders."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {
    "coworkenv": "coworkenv",
    "state": "coworkenv/state",
    "servers": "coworkenv/servers",
    "verifiers": "coworkenv/verifiers",
    "rollout": "coworkenv/rollout",
    "synth": "coworkenv/synth",
}


def test_wheel_holds_one_top_level_package_with_every_source_file(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("coworkenv-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    top_level = {name.split("/")[0] for name in names}
    assert {t for t in top_level if not t.endswith(".dist-info")} == {"coworkenv"}
    expected = {
        f"{target}/{path.relative_to(ROOT / folder).as_posix()}"
        for folder, target in FOLDERS.items()
        for path in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert expected - names == set()
    assert "coworkenv/servers/README.md" in names
    assert "coworkenv/py.typed" in names


def test_the_checkout_is_the_package_tree_editors_and_type_checkers_see() -> None:
    # Each top-level folder is a subpackage through a committed link in `coworkenv/`, so
    # `coworkenv.servers` is `servers/` for any tool that reads the checkout.
    for folder, target in FOLDERS.items():
        assert (ROOT / target).resolve() == (ROOT / folder).resolve(), target
    assert (ROOT / "coworkenv" / "py.typed").is_file()
