"""The lead's dashboard in Chromium: every chart drawn with data, the tables and the Retrain button.

A campaign with five annotators labeling over the last 30 days (some solutions twice, one gold
question), three generations, and four training runs. Charts are uPlot canvases; a chart counts as
drawn with data when its canvas holds pixels of its series' colour (axes and grid use other greys).
Screenshots at 1440x900 go to test-results/screenshots/dashboard*.png.
"""

from __future__ import annotations

import hashlib
import random
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import (
    Annotation,
    AnnotationSource,
    AnnotatorStatus,
    Problem,
    Project,
    Role,
    ScreeningStatus,
    Solution,
    Step,
)
from annotate.selectors.stats import disagreements
from annotate.services.members import grant_lead_admin
from ml.models import TrainingRun
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps
from tests.e2e.helpers import COUNT_COLOR_PIXELS, SHOTS, login, make_user

pytestmark = pytest.mark.django_db(transaction=True)

# chart -> series colours that must appear in its canvas (see frontend/src/dashboard/)
CHART_COLORS = {
    "generations": ["#1f6feb", "#afb8c1"],
    "hourly": ["#24292f"],
    "daily": ["#24292f", "#1f6feb"],
    "ratings": ["#2da44e", "#cf222e"],
    "finish": ["#7c3aed"],
    "curve": ["#1f6feb", "#d97706"],
    "strategies": ["#059669"],
}


def _hash(*parts) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _steps(ratings: list[int], flagged: int | None = None) -> list[dict]:
    return [
        {
            "completions": [{"text": f"step {i}", "rating": r, "flagged": i == flagged}],
            "human_completion": None,
            "chosen_completion": None if r == -1 else 0,
        }
        for i, r in enumerate(ratings)
    ]


def build_campaign() -> Project:
    rng = random.Random(7)
    now = timezone.now()
    project = Project.objects.create(
        slug="algebra", name="Algebra, round 1", overlap=2, screening_threshold=0.8, current_generation=2
    )
    make_user("lena", project, Role.LEAD)
    names = ["ann", "bob", "chen", "dara", "eli"]
    users = [make_user(n, project) for n in names]
    strategies = ["random", "uncertainty", "convincing_wrong", "mix"]
    solutions = []
    for i in range(80):
        gen = 0 if i < 30 else 1 if i < 60 else 2
        problem = Problem.objects.create(
            project=project, text=f"Problem {i}", content_hash=_hash("p", i), text_hash=_hash("t", i)
        )
        solutions.append(
            Solution(
                project=project,
                problem=problem,
                content_hash=_hash("s", i),
                n_steps=rng.randint(3, 8),
                generation=gen,
                strategy="random" if gen == 0 else strategies[i % 4],
                answer_correct=rng.random() < 0.3,
            )
        )
    Solution.objects.bulk_create(solutions)
    Step.objects.bulk_create([Step(solution=s, index=k, text=f"step {k}") for s in solutions for k in range(s.n_steps)])
    annotations = []
    for i, solution in enumerate(solutions[:55]):
        labelers = rng.sample(users, 2 if i % 3 == 0 else 1)
        for user in labelers:
            careless = user.username == "eli"
            ratings = [
                1 if rng.random() < (0.6 if careless else 0.8) else rng.choice([0, -1]) for _ in range(solution.n_steps)
            ]
            if -1 in ratings:
                ratings = ratings[: ratings.index(-1) + 1]
            steps = _steps(ratings, flagged=0 if rng.random() < 0.1 else None)
            age = timedelta(hours=rng.uniform(0, 47)) if i % 2 else timedelta(days=rng.uniform(0, 29))
            annotations.append(
                Annotation(
                    project=project,
                    solution=solution,
                    annotator=user,
                    labeler_uuid=str(user.pk),
                    submitted_at=now - age,
                    generation=solution.generation,
                    finish_reason="found_error" if -1 in ratings else rng.choice(["solution", "solution", "give_up"]),
                    total_time_ms=rng.randint(20, 240) * 1000,
                    label_steps=dumps_label_steps(steps),
                    **label_counters(steps),
                )
            )
        solution.annotation_count = len(labelers)
        solution.is_open = len(labelers) < 2
    Solution.objects.bulk_update(solutions, ["annotation_count", "is_open"])
    gold = Solution.objects.create(
        project=project,
        problem=solutions[0].problem,
        content_hash=_hash("gold"),
        n_steps=3,
        is_gold=True,
        is_quality_control=True,
        is_open=False,
        annotation_count=len(users) + 1,
    )
    gold_steps = _steps([1, 1, -1])
    annotations.append(
        Annotation(
            project=project,
            solution=gold,
            labeler_uuid="gold",
            source=AnnotationSource.IMPORT,
            submitted_at=now - timedelta(days=40),
            is_gold=True,
            is_quality_control=True,
            finish_reason="found_error",
            label_steps=dumps_label_steps(gold_steps),
            **label_counters(gold_steps),
        )
    )
    for user in users:
        answer = _steps([1, -1] if user.username == "eli" else [1, 1, -1])
        annotations.append(
            Annotation(
                project=project,
                solution=gold,
                annotator=user,
                labeler_uuid=str(user.pk),
                submitted_at=now - timedelta(hours=rng.uniform(0, 30)),
                is_quality_control=True,
                finish_reason="found_error",
                total_time_ms=60_000,
                label_steps=dumps_label_steps(answer),
                **label_counters(answer),
            )
        )
    Annotation.objects.bulk_create(annotations)
    for user in users:
        failed = user.username == "eli"
        AnnotatorStatus.objects.create(
            project=project,
            user=user,
            screening_status=ScreeningStatus.FAILED if failed else ScreeningStatus.PASSED,
            screening_agreement=0.55 if failed else 0.9,
        )
    curve = [(120, 0.61, 0.52, 0.30, 0.16), (260, 0.68, 0.58, 0.38, 0.11), (410, 0.74, 0.63, 0.45, 0.07)]
    for i, (labels, auroc, acc, f1, ece) in enumerate(curve):
        TrainingRun.objects.create(
            project=project,
            status="succeeded",
            label_count=labels,
            is_active=i == len(curve) - 1,
            metrics={"heldout": {"auroc_negative": auroc, "accuracy": acc, "first_error_f1": f1, "ece": ece}},
            finished_at=now - timedelta(days=10 - 4 * i),
        )
    TrainingRun.objects.create(project=project, status="failed", label_count=430, error="RuntimeError: out of memory")
    return project


def test_lead_sees_every_chart_drawn_with_data(pages):
    build_campaign()
    grant_lead_admin(user=get_user_model().objects.get(username="lena"))  # as add_member does for a lead
    page = pages.page()
    login(page, "lena", "/dashboard/algebra/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    page.evaluate("document.fonts.ready")

    for chart, colors in CHART_COLORS.items():
        box = page.locator(f'[data-chart="{chart}"]')
        expect(box).to_have_attribute("data-drawn", "true")
        canvas = box.locator("canvas").first
        assert canvas.bounding_box()["width"] > 200, chart
        for color in colors:
            pixels = page.evaluate(COUNT_COLOR_PIXELS, [box.element_handle(), color])
            assert pixels > 20, f"{chart}: no {color} pixels drawn"

    # numbers and legends
    expect(page.locator('[data-slot="progress-figures"]')).to_contain_text("55 / 80")
    expect(page.locator('[data-chart="ratings"] .sl-legend')).to_contain_text("positive (+1):")
    expect(page.locator('[data-chart="finish"] .sl-legend')).to_contain_text("found error:")
    expect(page.locator('[data-chart="strategies"] .sl-legend')).to_contain_text("uncertainty:")
    expect(page.locator('[data-chart="hourly"] .u-legend')).to_contain_text("all annotators")
    expect(page.locator('[data-chart="curve"] .u-legend')).to_contain_text("First-error F1")
    # the legend shows the latest run's values while the cursor is off the chart, not uPlot's "--";
    # hovering the first run's point shows its values, leaving shows the latest ones again
    legend = page.locator('[data-chart="curve"] .u-legend')
    expect(legend).to_contain_text("410")
    expect(legend).to_contain_text("0.45")
    expect(legend).not_to_contain_text("--")
    over = page.locator('[data-chart="curve"] .u-over')
    over.hover(position={"x": 2, "y": over.bounding_box()["height"] / 2})
    expect(legend).to_contain_text("120")
    expect(legend).to_contain_text("0.3")
    page.mouse.move(5, 5)
    expect(legend).to_contain_text("410")
    expect(page.locator('[data-chart="hourly"] .u-legend')).not_to_contain_text("--")
    expect(page.locator('[data-slot="agreement"]')).to_contain_text("Krippendorff")
    agreement = page.locator('[data-slot="agreement"]')
    expect(agreement).to_contain_text("over 20 solutions")
    expect(agreement).to_contain_text("29 annotation pairs")
    expect(agreement).not_to_contain_text("too few")  # 20+ of each: no warning
    expect(page.locator('[data-slot="model-figures"]')).to_contain_text("run #")
    # the quality table: five annotators, eli below the threshold
    rows = page.locator('[data-slot="annotators"] tbody tr')
    expect(rows).to_have_count(5)
    expect(page.locator('[data-slot="annotators"] tr.sl-below')).to_have_count(1)
    expect(page.locator('[data-slot="annotators"] tr.sl-below th')).to_contain_text("eli")
    expect(page.locator('[data-slot="runs"] tbody tr')).to_have_count(4)
    expect(page.locator('[data-slot="runs"] tr.sl-active')).to_have_count(1)
    # where annotators disagree: the solutions behind the first-error agreement figure, with each
    # label's first error, and a way to settle them in the admin
    found = disagreements(project=Project.objects.get(slug="algebra"))
    assert found["shown"], "the campaign has solutions whose labels differ"
    table = page.locator('[data-slot="disagreements"]')
    expect(table.locator("tbody tr")).to_have_count(len(found["shown"]))
    first = found["shown"][0]
    row = table.locator(f'tr[data-solution="{first["solution"]}"]')
    for label in first["labels"]:
        step = label["first_error_step"]
        expect(row).to_contain_text(f"{label['annotator']}: {'none' if step is None else f'step {step}'}")
    expect(page.locator('[data-slot="disagreements-note"]')).to_contain_text(
        f"{found['disagreeing']} of {found['solutions_compared']} solutions labeled twice or more"
    )
    page.locator("#quality").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "dashboard-disagreements.png"))
    with page.expect_navigation():
        row.get_by_role("link", name="Its labels").click()
    expect(page.locator("#result_list tbody tr")).to_have_count(len(first["labels"]))
    page.go_back()
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    # no autolabel job yet: the panel says what one needs (a completions server), not just where
    expect(page.locator('[data-slot="auto-note"]')).to_contain_text("needs an OpenAI-compatible completions server")

    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "dashboard.png"))
    page.screenshot(path=str(SHOTS / "dashboard-full.png"), full_page=True)
    page.locator("#quality").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "dashboard-quality.png"))
    page.locator("#model").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "dashboard-model.png"))

    # the CSV link downloads the per-annotator table
    with page.expect_download() as download:
        page.locator('[data-link="csv"]').click()
    csv_text = Path(download.value.path()).read_text()
    assert csv_text.splitlines()[0].startswith("annotator,labels,steps")
    assert len(csv_text.splitlines()) == 6


def test_retrain_button_reports_the_outcome(pages):
    """POST /training-runs/ (engineer mlops's endpoint): the page shows the new run or the error."""
    build_campaign()
    runs_before = TrainingRun.objects.count()
    page = pages.page()
    login(page, "lena", "/dashboard/algebra/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    page.get_by_role("button", name="Retrain now").click()
    message = page.locator('[data-slot="retrain-message"]')
    expect(message).to_have_text(re.compile(r"^(Training run #\d+ \w+\.|Retrain failed: \d{3}: .+)$"))
    if message.inner_text().startswith("Training run"):
        assert TrainingRun.objects.count() == runs_before + 1
        expect(page.locator('[data-slot="runs"] tbody tr')).to_have_count(5)
        # the run ends in a worker; the page follows it there without a reload
        run = TrainingRun.objects.latest("id")
        # queued until a worker takes it, then training
        expect(page.locator('[data-slot="model-figures"]')).to_contain_text(
            re.compile("queued: waiting for a worker|training in progress")
        )
        TrainingRun.objects.filter(pk=run.pk).update(status="succeeded", finished_at=timezone.now())
        expect(page.locator('[data-slot="model-figures"]')).to_contain_text(f"#{run.pk} succeeded", timeout=15_000)
        # and the note under the button no longer says the run was created
        expect(message).to_have_text(f"Training run #{run.pk} succeeded.")
    else:
        assert "Retrain failed" in message.inner_text()
        expect(message).to_have_class(re.compile("sl-error"))
    expect(page.get_by_role("button", name="Retrain now")).to_be_enabled()
    page.screenshot(path=str(SHOTS / "dashboard-retrain.png"))


def test_retrain_button_sends_one_request_however_often_it_is_clicked(pages):
    """A double click made two training runs: the button stays disabled while its request is in
    flight, so further clicks send nothing."""
    build_campaign()
    runs_before = TrainingRun.objects.count()
    page = pages.page()
    held = []  # the POST is held until the clicks are done

    def hold(route) -> None:
        if route.request.method == "POST":
            held.append(route)
        else:
            route.continue_()

    page.route(re.compile(r"/training-runs/$"), hold)  # before the page loads, so no request slips past
    login(page, "lena", "/dashboard/algebra/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    button = page.get_by_role("button", name="Retrain now")
    button.dblclick()
    expect(button).to_be_disabled()
    box = button.bounding_box()
    page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # real clicks, not waiting
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    assert len(held) == 1
    held[0].continue_()
    message = page.locator('[data-slot="retrain-message"]')
    expect(message).to_have_text(re.compile(r"^Training run #\d+ \w+\.$"))
    expect(button).to_be_enabled()
    assert len(held) == 1 and TrainingRun.objects.count() == runs_before + 1

    # A slow double click against a fast server: the first click's request has ended, the button is
    # enabled again, and the double click's second click still sends nothing.
    page.unroute(re.compile(r"/training-runs/$"))
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and "/training-runs/" in r.url else None)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down(click_count=2)
    page.mouse.up(click_count=2)
    page.wait_for_timeout(300)
    assert posts == []
    button.click()  # a new click is a new request (it joins the waiting run: no second run)
    joined = r"^Joined training run #\d+ \(\w+\): it covers these labels, so no second run\.$"
    expect(message).to_have_text(re.compile(joined))
    assert len(posts) == 1 and TrainingRun.objects.count() == runs_before + 1


def test_annotator_gets_403_page(pages):
    build_campaign()
    page = pages.page()
    login(page, "ann", "/dashboard/algebra/")
    page.wait_for_url(re.compile(r"^https?://[^/]+/dashboard/algebra/$"))  # past the login form
    response = page.goto("/dashboard/algebra/")
    assert response is not None and response.status == 403
