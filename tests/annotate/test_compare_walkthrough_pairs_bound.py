"""A compare project keeps its pairs-per-problem bound (lead walkthrough): README says importing
more solutions later adds pairs "up to the same bound", but only the command knew the bound, for
the one import it ran: a project made with `--pairs-per-problem 2` got up to 3 pairs on every
problem from its next Data-page import (one new solution made 6 pairs, on problems it never
touched), and a later command import without the flag did the same."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotate.models import Comparison, Project, Role
from annotate.services.imports import import_file
from annotate.services.members import add_member
from tests.compare_lines import LINES

pytestmark = pytest.mark.django_db


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _pairs_by_problem(project: Project) -> dict[str, int]:
    counts = Counter(Comparison.objects.filter(project=project).values_list("problem__text", flat=True))
    return dict(counts)


def _third_solution_of_3x3() -> dict:
    return {"problem": LINES[3]["problem"], "ground_truth_answer": "9", "steps": ["Nine.", "# Answer\n\n9"]}


def test_a_data_page_import_adds_pairs_up_to_the_bound_the_project_was_made_with(tmp_path: Path):
    first = _write(tmp_path / "pairs.jsonl", LINES)
    call_command("import_prm800k", str(first), "--project", "duel", "--task", "compare", "--pairs-per-problem", "2")
    project = Project.objects.get(slug="duel")
    assert project.pairs_per_problem == 2
    assert _pairs_by_problem(project) == {"What is 2+2?": 2, "What is $3 \\cdot 3$?": 1}

    # the Data page's import job calls import_file with no bound of its own
    result = import_file(project=project, path=_write(tmp_path / "more.jsonl", [_third_solution_of_3x3()]))
    assert result.pairs_created == 1  # the problem that got a solution, up to 2; 2+2 had its 2 already
    assert _pairs_by_problem(project) == {"What is 2+2?": 2, "What is $3 \\cdot 3$?": 2}


def test_a_later_command_import_keeps_the_bound_unless_it_names_another(tmp_path: Path):
    first = _write(tmp_path / "pairs.jsonl", LINES)
    call_command("import_prm800k", str(first), "--project", "duel", "--task", "compare", "--pairs-per-problem", "1")
    project = Project.objects.get(slug="duel")
    assert _pairs_by_problem(project) == {"What is 2+2?": 1, "What is $3 \\cdot 3$?": 1}

    more = _write(tmp_path / "more.jsonl", [_third_solution_of_3x3()])
    call_command("import_prm800k", str(more), "--project", "duel")
    assert _pairs_by_problem(project) == {"What is 2+2?": 1, "What is $3 \\cdot 3$?": 1}

    # naming a bound on a later import changes the project's: every problem may take more pairs
    call_command("import_prm800k", str(first), "--project", "duel", "--pairs-per-problem", "3")
    project.refresh_from_db()
    assert project.pairs_per_problem == 3
    assert _pairs_by_problem(project) == {"What is 2+2?": 3, "What is $3 \\cdot 3$?": 3}


def test_a_project_made_in_the_browser_has_the_default_bound():
    assert Project.objects.create(slug="web", task_kind="compare").pairs_per_problem == 3


def test_the_data_page_names_the_projects_bound_to_its_import_script(client, tmp_path: Path):
    """The page's "no new pairs: a problem gets at most N pairs" reads N from here (it said 3)."""
    first = _write(tmp_path / "pairs.jsonl", LINES)
    call_command("import_prm800k", str(first), "--project", "duel", "--task", "compare", "--pairs-per-problem", "1")
    lead = get_user_model().objects.create_user("lead1", password="pw")
    add_member(project=Project.objects.get(slug="duel"), user=lead, role=Role.LEAD)
    client.force_login(lead)
    html = client.get("/projects/duel/data/").content.decode()
    config = json.loads(re.search(r'<script id="import-config" type="application/json">(.*?)</script>', html).group(1))
    assert config["pairs_per_problem"] == 1
