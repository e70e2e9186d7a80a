"""ARCHITECTURE.md names only paths that exist (it is the map a new engineer follows)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Backticked repository paths: a folder ending in / or a file with an extension, no spaces or braces.
PATH = re.compile(r"`((?:[\w.-]+/)+(?:[\w.*-]+\.(?:py|md|toml|ts))?)`")


def test_every_path_in_architecture_md_exists():
    text = (ROOT / "ARCHITECTURE.md").read_text()
    paths = sorted(set(PATH.findall(text)))
    assert len(paths) > 20, paths
    missing = [p for p in paths if not (list(ROOT.glob(p)) if "*" in p else (ROOT / p).exists())]
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"
