"""README's configuration table (under "Real stack") and the code agree: every environment variable
the settings, gunicorn and Celery configuration read is in the table, and every variable in the
table is read somewhere. An operator reads the table to configure a deployment; a variable the code
reads but the table leaves out cannot be found, and one the table lists that nothing reads changes
nothing without a word."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Read in config/ but not deployment settings: the test settings set these for the suite only.
TEST_ONLY = {"config/settings/test.py"}
READS = re.compile(
    r"(?:os\.environ(?:\.get|\.setdefault)?\(|os\.environ\[|os\.getenv\(|env_bool\(|env_list\()"
    r"""\s*["']([A-Z][A-Z0-9_]*)["']"""
)


def _table() -> set[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Real stack\n", 1)[1]
    rows = []
    for line in section.split("| variable | default | meaning |", 1)[1].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1])
    return {name for first in rows for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", first)}


def _read_by_config() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted((ROOT / "config").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in TEST_ONLY:
            continue
        for name in READS.findall(path.read_text()):
            found.setdefault(name, rel)
    return found


def test_every_variable_the_configuration_reads_is_in_the_readme_table():
    table = _table()
    assert {"DATABASE_URL", "SECRET_KEY", "TRUSTED_PROXIES"} <= table  # the parser finds the table
    missing = {name: where for name, where in _read_by_config().items() if name not in table}
    assert not missing, f"read but not in README's configuration table: {missing}"


def test_every_variable_in_the_readme_table_is_read():
    sources = "\n".join(
        path.read_text()
        for folder in ("config", "annotate", "ml", "autolabel", "labeling_api", "core")
        for path in (ROOT / folder).rglob("*.py")
        if "/migrations/" not in path.as_posix() and path.relative_to(ROOT).as_posix() not in TEST_ONLY
    )
    read = set(READS.findall(sources))
    unread = sorted(_table() - read)
    assert not unread, f"in README's configuration table but read nowhere: {unread}"
