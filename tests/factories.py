"""The test suite's one factory module (factory-boy): users, projects, memberships, problems,
solutions with their steps, and gold annotations. Test worlds build on these; every name and hash
comes from a sequence, so tests never collide on unique constraints."""

from __future__ import annotations

import hashlib

import factory
import orjson
from django.contrib.auth import get_user_model
from factory.django import DjangoModelFactory

from annotate.models import Annotation, AnnotationSource, Membership, Problem, Project, Role, Solution, Step
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps

PASSWORD = "pw-steplabel-test"


def _sha(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


class UserFactory(DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"u{n}")
    password = factory.django.Password(PASSWORD)


class ProjectFactory(DjangoModelFactory):
    class Meta:
        model = Project

    slug = factory.Sequence(lambda n: f"p{n}")


class MembershipFactory(DjangoModelFactory):
    class Meta:
        model = Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.ANNOTATOR


class ProblemFactory(DjangoModelFactory):
    class Meta:
        model = Problem

    project = factory.SubFactory(ProjectFactory)
    text = factory.Sequence(lambda n: f"Problem {n}: compute $1+{n}$.")
    ground_truth_answer = factory.Sequence(lambda n: str(1 + n))
    content_hash = factory.LazyAttribute(lambda o: _sha("problem", o.text))


class SolutionFactory(DjangoModelFactory):
    """A solution with `n_steps` steps ("Step k of solution <id>.")."""

    class Meta:
        model = Solution
        skip_postgeneration_save = True  # the steps hook writes steps, not the solution

    class Params:
        n_steps_created = 3

    project = factory.SubFactory(ProjectFactory)
    problem = factory.SubFactory(ProblemFactory, project=factory.SelfAttribute("..project"))
    content_hash = factory.Sequence(lambda n: _sha("solution", n))
    n_steps = factory.SelfAttribute("n_steps_created")

    @factory.post_generation
    def steps(self, create, extracted, **kwargs):
        if create:
            Step.objects.bulk_create(
                [Step(solution=self, index=k, text=f"Step {k} of solution {self.pk}.") for k in range(self.n_steps)]
            )


def member(project: Project, *, name: str | None = None, role: str = Role.ANNOTATOR):
    """A user with a role in the project."""
    user = UserFactory(**({"username": name} if name else {}))
    MembershipFactory(project=project, user=user, role=role)
    return user


def gold_label_steps(ratings: list[int]) -> list[dict]:
    """PRM800K label steps with the given main-line ratings (phase 2 shape at a final -1)."""
    steps = []
    for i, rating in enumerate(ratings):
        last_error = rating == -1 and i == len(ratings) - 1
        steps.append(
            {
                "completions": [{"text": f"step {i}", "rating": rating, "flagged": False}],
                "human_completion": None,
                "chosen_completion": None if last_error else 0,
            }
        )
    return steps


class GoldAnnotationFactory(DjangoModelFactory):
    """A trusted (gold) label of a solution: pass `ratings` for its main line."""

    class Meta:
        model = Annotation
        exclude = ("ratings", "steps_")

    ratings = (1, 1, -1)
    steps_ = factory.LazyAttribute(lambda o: gold_label_steps(list(o.ratings)))
    solution = factory.SubFactory(SolutionFactory)
    project = factory.SelfAttribute("solution.project")
    labeler_uuid = "gold"
    source = AnnotationSource.IMPORT
    submitted_at = "2023-01-01T00:00:00Z"
    is_gold = True
    label_steps = factory.LazyAttribute(lambda o: dumps_label_steps(o.steps_))
    finish_reason = factory.LazyAttribute(
        lambda o: "found_error" if label_counters(o.steps_)["first_error_index"] is not None else "solution"
    )

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        kwargs.update(label_counters(orjson.loads(kwargs["label_steps"])))  # the counters beside the JSON
        return super()._create(model_class, *args, **kwargs)


# --- helpers of the queue, API and security tests (was tests/annotate/queue_factories.py) ---------


def make_project(slug: str | None = None, **fields) -> Project:
    return ProjectFactory(**({"slug": slug} if slug else {}), **fields)


def make_user(name: str | None = None, *, project: Project | None = None, role: str = Role.ANNOTATOR):
    user = UserFactory(**({"username": name} if name else {}))
    if project is not None:
        MembershipFactory(project=project, user=user, role=role)
    return user


def make_solutions(project: Project, count: int, *, n_steps: int = 3, priority_from: float = 0.0, **fields):
    """`count` solutions of one problem each, priorities descending from priority_from + count."""
    return [
        SolutionFactory(project=project, n_steps_created=n_steps, priority=priority_from + count - i, **fields)
        for i in range(count)
    ]


def make_gold_annotation(solution: Solution, ratings: list[int]) -> Annotation:
    return GoldAnnotationFactory(solution=solution, ratings=tuple(ratings))


def payload(ratings: list[int | None], *, key: str = "k", finish_reason: str | None = None, **extra) -> dict:
    """A submit payload with one main-line rating per step and no alternatives."""
    if finish_reason is None:
        finish_reason = "found_error" if -1 in ratings else "solution"
    return {
        "idempotency_key": key,
        "finish_reason": finish_reason,
        "total_time_ms": 1234,
        "steps": [
            {"index": i, "rating": r, "flagged": False, "alternatives": [], "human_completion": None}
            for i, r in enumerate(ratings)
        ],
        **extra,
    }
