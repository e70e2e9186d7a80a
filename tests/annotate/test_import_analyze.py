"""An import that loads rows ends with ANALYZE of the tables it loaded (planner statistics at once,
not whenever autovacuum gets to them); an import that loads nothing does not."""

from pathlib import Path

import pytest
from django.db import connection

from annotate.models import Annotation, Problem, Project, Solution, Step
from annotate.services import imports

pytestmark = pytest.mark.django_db
FIXTURE = Path(__file__).parent / "fixtures" / "edge_cases.jsonl"
TABLES = [model._meta.db_table for model in (Problem, Solution, Step, Annotation)]


def analyze_counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # read the counters as they are now
        cursor.execute("SELECT relname, analyze_count FROM pg_stat_user_tables WHERE relname = ANY(%s)", [TABLES])
        return dict(cursor.fetchall())


def test_import_analyzes_the_tables_it_loaded():
    project = Project.objects.create(slug="analyzed", name="Analyzed")
    before = analyze_counts()
    result = imports.import_file(project=project, path=FIXTURE)
    assert result.annotations_created > 0
    after = analyze_counts()
    assert {table: after[table] - before[table] for table in TABLES} == dict.fromkeys(TABLES, 1)

    again = imports.import_file(project=project, path=FIXTURE)  # every line known: nothing loaded
    assert not again.created_anything
    assert analyze_counts() == after
