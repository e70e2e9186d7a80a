"""What a row *is* cannot be changed in the admin once it exists (annotate.admin_scope.
FixedIdentityMixin): a labeled solution's project and problem, a pair's project, problem and two
solutions, who answered a preference. Found by the lead walkthrough: a lead moved a labeled
solution to another project and problem, and re-pointed an answered pair, and the PRM800K and
preference exports then paired labels with other texts. Real admin forms over HTTP (PostgreSQL)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from annotate.models import Comparison, Problem, Project, Role, Solution
from annotate.services.members import add_member
from tests.api_clients import member_client
from tests.compare_lines import LINES
from tests.factories import make_solutions, payload

pytestmark = pytest.mark.django_db


def form_data(response) -> dict:
    """The admin change form as the browser would post it back (the editable fields only)."""
    data: dict = {}

    def put(name: str, value) -> None:
        if value is None or value is False:
            return
        data[name] = "on" if value is True else value

    form = response.context["adminform"].form
    for name in form.fields:
        put(name, form[name].value())
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        for key, value in formset.management_form.initial.items():
            data[f"{formset.prefix}-{key}"] = value
        for each in formset.forms:
            for name in each.fields:
                put(each.add_prefix(name), each[name].value())
    return data


def _lead_of(*projects: Project) -> Client:
    lead = member_client(projects[0], "two-project-lead", None).user
    for project in projects:
        add_member(project=project, user=lead, role=Role.LEAD)  # a lead gets the admin as the app grants it
    client = Client()
    client.force_login(lead)
    return client


@pytest.fixture
def duel(tmp_path: Path) -> Project:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    call_command("import_prm800k", str(path), "--project", "duel", "--task", "compare", stdout=io.StringIO())
    return Project.objects.get(slug="duel")


def test_a_labeled_solution_keeps_its_project_and_problem(duel):
    algebra = Project.objects.create(slug="algebra")
    solution = make_solutions(algebra, 1)[0]
    annotator = member_client(algebra, "alg-ann", Role.ANNOTATOR)
    task = annotator.get("/api/v1/projects/algebra/tasks/next/").json()
    annotator.post(f"/api/v1/assignments/{task['assignment_id']}/submit/", payload([1, 1, 1]), format="json")
    lead = _lead_of(algebra, duel)
    url = f"/admin/annotate/solution/{solution.pk}/change/"
    page = lead.get(url)
    assert page.status_code == 200
    data = form_data(page)
    assert "project" not in data and "problem" not in data  # shown, not editable
    other_problem = Problem.objects.filter(project=duel).first()
    response = lead.post(url, {**data, "project": duel.pk, "problem": other_problem.pk, "is_gold": "on"})
    assert response.status_code == 302, response.content[:500]
    solution.refresh_from_db()
    assert (solution.project_id, solution.problem.project_id, solution.is_gold) == (algebra.pk, algebra.pk, True)


def test_a_pair_keeps_its_solutions_and_a_gold_pair_needs_its_answer(duel):
    demo = Project.objects.create(slug="demo")
    stranger = make_solutions(demo, 1)[0]
    lead = _lead_of(duel, demo)
    pair = Comparison.objects.filter(project=duel).order_by("id").first()
    before = (pair.project_id, pair.problem_id, pair.solution_a_id, pair.solution_b_id)
    url = f"/admin/annotate/comparison/{pair.pk}/change/"
    data = form_data(lead.get(url))
    assert not {"project", "problem", "solution_a", "solution_b"} & set(data)
    refused = lead.post(url, {**data, "solution_a": stranger.pk, "is_gold": "on", "gold_preference": ""})
    assert refused.status_code == 200 and "A gold pair needs its known answer." in refused.content.decode()
    done = lead.post(
        url, {**data, "solution_a": stranger.pk, "project": demo.pk, "is_gold": "on", "gold_preference": "B"}
    )
    assert done.status_code == 302
    pair.refresh_from_db()
    assert (pair.project_id, pair.problem_id, pair.solution_a_id, pair.solution_b_id) == before
    assert (pair.is_gold, pair.gold_preference) == (True, "B")


def test_a_pair_added_by_hand_is_two_solutions_of_its_problem_in_a_compare_project(duel):
    demo = Project.objects.create(slug="demo")
    lead = _lead_of(duel, demo)
    problem = Problem.objects.filter(project=duel).order_by("id").first()
    own = list(Solution.objects.filter(problem=problem).order_by("id")[:2])
    elsewhere = Solution.objects.filter(project=duel).exclude(problem=problem).order_by("id").first()
    base = {"project": duel.pk, "problem": problem.pk, "reason": "other", "priority": 0, "annotation_count": 0}
    wrong = lead.post("/admin/annotate/comparison/add/", {**base, "solution_a": own[0].pk, "solution_b": elsewhere.pk})
    assert wrong.status_code == 200 and "answers another problem" in wrong.content.decode()
    steps = make_solutions(demo, 2)
    not_compare = lead.post(
        "/admin/annotate/comparison/add/",
        {
            **base,
            "project": demo.pk,
            "problem": steps[0].problem_id,
            "solution_a": steps[0].pk,
            "solution_b": steps[1].pk,
        },
    )
    assert not_compare.status_code == 200 and "Pairs belong to compare projects." in not_compare.content.decode()
    assert (
        Comparison.objects.filter(solution_a__in=[own[0], steps[0]]).count()
        == Comparison.objects.filter(solution_a=own[0]).count()
    )  # nothing added by the refused forms


def test_a_row_added_by_hand_answers_a_problem_of_its_own_project(duel):
    """One rule for solutions and pairs (annotate.admin_scope.problem_elsewhere)."""
    demo = Project.objects.create(slug="demo")
    lead = _lead_of(duel, demo)
    foreign = Problem.objects.filter(project=duel).order_by("id").first()
    own = list(Solution.objects.filter(problem=foreign).order_by("id")[:2])
    before = (Solution.objects.count(), Comparison.objects.count())
    solution = lead.post(
        "/admin/annotate/solution/add/",
        {"project": demo.pk, "problem": foreign.pk, "content_hash": "x", "n_steps": 0, "priority": 0},
    )
    assert solution.status_code == 200 and "This problem belongs to another project." in solution.content.decode()
    demo.task_kind = "compare"
    demo.save(update_fields=["task_kind"])
    pair = lead.post(
        "/admin/annotate/comparison/add/",
        {
            "project": demo.pk,
            "problem": foreign.pk,
            "solution_a": own[0].pk,
            "solution_b": own[1].pk,
            "reason": "other",
            "priority": 0,
            "annotation_count": 0,
        },
    )
    assert pair.status_code == 200 and "This problem belongs to another project." in pair.content.decode()
    assert (Solution.objects.count(), Comparison.objects.count()) == before
