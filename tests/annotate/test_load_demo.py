"""load_demo: the demo project, users, roles and solutions, created once however often it runs."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotate.models import LabelerProfile, Membership, Problem, Project, Solution, Step

pytestmark = pytest.mark.django_db


def load() -> str:
    out = StringIO()
    call_command("load_demo", stdout=out)
    return out.getvalue()


def test_load_demo_creates_everything_once():
    load()
    project = Project.objects.get(slug="demo")
    assert "stop at the first negative step" in project.guidelines.lower()
    roles = dict(Membership.objects.filter(project=project).values_list("user__username", "role"))
    assert roles == {"annotator1": "annotator", "annotator2": "annotator", "lead": "lead", "mlengineer": "ml_engineer"}
    User = get_user_model()
    for name in [*roles, "admin"]:
        user = User.objects.get(username=name)
        assert user.check_password("steplabel-demo")
        assert LabelerProfile.objects.filter(user=user).exists()
    assert User.objects.get(username="admin").is_superuser
    creators = User.objects.filter(groups__name="Project creators").values_list("username", flat=True)
    assert list(creators) == ["lead"]  # the demo lead sees Create project

    solutions = Solution.objects.filter(project=project)
    assert solutions.count() == 14 and Problem.objects.filter(project=project).count() == 13
    # Graded on import: the demo has wrong solutions and right ones.
    assert solutions.filter(answer_correct=False).count() == 7
    assert solutions.filter(answer_correct=True).count() == 7
    last_steps = Step.objects.filter(solution__project=project).order_by("solution_id", "-index")
    assert all(s.text.startswith("# Answer\n\n") for s in last_steps.distinct("solution_id"))

    counts = (User.objects.count(), Membership.objects.count(), Solution.objects.count(), Step.objects.count())
    out = load()
    assert "already there" in out
    assert (User.objects.count(), Membership.objects.count(), Solution.objects.count(), Step.objects.count()) == counts
