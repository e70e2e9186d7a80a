"""`autolabel` end to end: a real Celery worker, PostgreSQL, Redis and a stand-in completions server.

The stand-in (tests/autolabel/stand_in_server.py) answers wrong whenever the prompt holds a planted
WRONG step, so the labels to expect are known: the step that plants it is `-`, the ones before `+`.
"""

import io
import json
import os
import signal
import socket
import time
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from annotate.models import Annotation, AnnotationSource, Project, Role, Solution
from autolabel import runner, services
from autolabel.models import AutolabelJob, AutolabelSettings, AutoSource, AutoStepLabel
from autolabel.rollouts import build_prompt
from core.models import JobStatus
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps
from tests.api_clients import member_client
from tests.autolabel.stand_in_server import Behaviour, stand_in_server
from tests.celery_worker import celery_worker, purge_broker, wait_for
from tests.factories import gold_label_steps

pytestmark = pytest.mark.django_db(transaction=True)

# problem, ground truth, steps (the last one gives the final answer)
SOLUTIONS = [
    ("What is 2+3?", "5", ["We add 2 and 3.", "So 2+3 = 6, WRONG.", "Checking: 6.", "# Answer\n\n6"]),
    ("What is 4*5?", "20", ["4*5 = 20.", "# Answer\n\n20"]),
    ("What is 10-3?", "7", ["SHAKY: 10-3 might be 7.", "Then 10-3 = 8, WRONG.", "# Answer\n\n8"]),
]
# first `-` step per problem (None: every step `+`), and the rollouts a binary search needs
EXPECTED = {"What is 2+3?": [1, -1, -1, -1], "What is 4*5?": [1, 1], "What is 10-3?": [1, -1, -1]}


def _project(tmp_path: Path, slug: str = "auto", solutions=SOLUTIONS) -> Project:
    source = tmp_path / f"{slug}.jsonl"
    source.write_text(
        "".join(json.dumps({"problem": p, "ground_truth_answer": t, "steps": s}) + "\n" for p, t, s in solutions)
    )
    call_command("import_prm800k", str(source), project=slug, no_progress=True, stdout=io.StringIO())
    return Project.objects.get(slug=slug)


def _behaviour(solutions=SOLUTIONS, **kwargs) -> Behaviour:
    return Behaviour(answers={p: t for p, t, _ in solutions}, **kwargs)


def _labels() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for solution in Solution.objects.select_related("problem").order_by("id"):
        rows = AutoStepLabel.objects.filter(solution=solution, source=AutoSource.ROLLOUT).order_by("index")
        found[solution.problem.text] = [row.label for row in rows]
    return found


def _autolabel(url: str, **options) -> str:
    out = io.StringIO()
    params = {"project": "auto", "base_url": url, "model": "stand-in", "rollouts": 4, "concurrency": 4, **options}
    call_command("autolabel", stdout=out, **params)
    return out.getvalue()


def test_autolabel_wait_labels_a_project_through_a_worker(tmp_path: Path) -> None:
    project = _project(tmp_path)
    behaviour = _behaviour()
    purge_broker()
    with stand_in_server(behaviour) as url, celery_worker():
        output = _autolabel(url, wait=True)
    assert "succeeded" in output
    assert _labels() == EXPECTED

    # Binary search: "2+3" probes steps 1 then 0 (its graded wrong answer is the last step's 0);
    # "4*5" is graded right (every prefix reaches it: no rollout); "10-3" probes steps 1 then 0.
    prompts = [request["prompt"] for request in behaviour.requests]
    assert sorted(prompts) == sorted(
        [
            build_prompt("What is 2+3?", SOLUTIONS[0][2][:2]),
            build_prompt("What is 2+3?", SOLUTIONS[0][2][:1]),
            build_prompt("What is 10-3?", SOLUTIONS[2][2][:2]),
            build_prompt("What is 10-3?", SOLUTIONS[2][2][:1]),
        ]
    )
    assert all(request["n"] == 4 and request["model"] == "stand-in" for request in behaviour.requests)
    shaky = AutoStepLabel.objects.get(solution__problem__text="What is 10-3?", index=0)
    assert (shaky.estimate, shaky.n_completions, shaky.n_correct, shaky.inferred) == (0.5, 4, 2, False)
    inferred = AutoStepLabel.objects.get(solution__problem__text="What is 2+3?", index=2)
    assert (inferred.label, inferred.estimate, inferred.inferred) == (-1, None, True)

    job = AutolabelJob.objects.get()
    assert (job.status, job.solutions_done, job.solutions_total, job.steps_labeled) == (JobStatus.SUCCEEDED, 3, 3, 9)
    assert (job.requests_done, job.completions_used) == (4, 16)
    assert AutolabelSettings.objects.get(project=project).completions_used == 16
    # Automatic labels are no human labels: the queue still holds every solution.
    assert Annotation.objects.count() == 0 and Solution.objects.filter(is_open=True).count() == 3

    # They export as Math-Shepherd lines.
    lead = member_client(project, "lead", Role.LEAD)
    body = b"".join(lead.get("/api/v1/projects/auto/export/?format=math_shepherd&labels=auto").streaming_content)
    lines = [json.loads(line) for line in body.splitlines()]
    assert [line["label"].count(" -") for line in lines] == [3, 0, 2]
    assert lines[0]["label"].startswith("What is 2+3? Step 1: We add 2 and 3. +\nStep 2: So 2+3 = 6, WRONG. -")

    # A lead sees them beside a human's labels; an annotator does not.
    wrong = Solution.objects.get(problem__text="What is 2+3?")
    steps = gold_label_steps([1, -1])
    Annotation.objects.create(
        project=project,
        solution=wrong,
        labeler_uuid="human-1",
        source=AnnotationSource.IMPORT,
        submitted_at=job.finished_at,
        finish_reason="found_error",
        label_steps=dumps_label_steps(steps),
        **label_counters(steps),
    )
    view = lead.get(f"/api/v1/projects/auto/solutions/{wrong.pk}/labels/").json()
    assert [step["human"] for step in view["steps"]] == [[1], [-1], [None], [None]]
    assert [step["auto"]["rollout"]["label"] for step in view["steps"]] == [1, -1, -1, -1]
    annotator = member_client(project, "ann", Role.ANNOTATOR)
    assert annotator.get(f"/api/v1/projects/auto/solutions/{wrong.pk}/labels/").status_code == 403
    assert annotator.get("/api/v1/projects/auto/autolabel-jobs/").status_code == 403

    stats = lead.get("/api/v1/projects/auto/stats/").json()["auto_labels"]
    assert stats["pairs_compared"] == 1
    assert (stats["precision_negative"], stats["recall_negative"], stats["first_error_agreement"]) == (1.0, 1.0, 1.0)
    assert stats["latest_job"]["status"] == JobStatus.SUCCEEDED
    polled = lead.get(f"/api/v1/autolabel-jobs/{job.pk}/").json()
    assert polled["status"] == "succeeded" and polled["completions_used"] == 16


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@override_settings(AUTOLABEL_MAX_RETRIES=2, AUTOLABEL_BACKOFF_S=0.01)
def test_a_dead_endpoint_fails_the_job_with_its_reason(tmp_path: Path) -> None:
    _project(tmp_path)
    url = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(CommandError, match=r"failed: .*127\.0\.0\.1.*(refused|Errno).*after 3 tries"):
        _autolabel(url, wait=True, here=True, concurrency=1)
    job = AutolabelJob.objects.get()
    assert job.status == JobStatus.FAILED and job.retries == 2 and job.finished_at is not None
    assert AutoStepLabel.objects.filter(inferred=False).count() == 0
    # The refused requests' completions go back to the budget.
    assert AutolabelSettings.objects.get().completions_used == 0


@override_settings(AUTOLABEL_MAX_RETRIES=3, AUTOLABEL_BACKOFF_S=0.01)
def test_retries_with_backoff_get_past_a_warming_server_and_bad_models_fail_at_once(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(runner, "LOAD_BATCH", 1)  # solutions read one at a time: the window refills
    _project(tmp_path)
    behaviour = _behaviour(fail_first=2, max_n=3)  # llama.cpp-like: fewer choices than asked
    with stand_in_server(behaviour) as url:
        _autolabel(url, here=True, wait=True, concurrency=1)
        job = AutolabelJob.objects.get()
        assert job.status == JobStatus.SUCCEEDED and job.retries == 2
        assert _labels() == EXPECTED
        assert AutoStepLabel.objects.get(solution__problem__text="What is 10-3?", index=0).n_completions == 4

        # nothing left to label: refused, and no job that would "succeed" having done nothing
        jobs_before = AutolabelJob.objects.count()
        with pytest.raises(CommandError, match="--solutions: nothing to label: rollouts need open solutions"):
            _autolabel(url, here=True, wait=True)
        assert AutolabelJob.objects.count() == jobs_before

        _project(tmp_path, slug="auto", solutions=[("What is 9-1?", "8", ["9-1 = 7, WRONG.", "# Answer\n\n7"])])
        behaviour.answers["What is 9-1?"] = "8"
        with pytest.raises(CommandError, match="HTTP 404.*does not exist"):
            _autolabel(url, here=True, wait=True, model="no-such-model")
        assert AutolabelJob.objects.order_by("-id").first().retries == 0


def test_gold_and_screening_questions_are_not_rolled_out(tmp_path: Path) -> None:
    """Found by the lead walkthrough: a job rolled out the 5 gold questions too, spending its budget
    on solutions whose labels are known, and counted 46 solutions where the dashboard said 41 open."""
    project = _project(tmp_path)
    every = list(services.candidates(project=project).values_list("id", flat=True))
    gold, screening = every[:2]
    Solution.objects.filter(pk=gold).update(is_gold=True)
    Solution.objects.filter(pk=screening).update(is_screening=True)
    assert list(services.candidates(project=project).values_list("id", flat=True)) == every[2:]


def test_the_budget_stops_a_job_and_keeps_its_partial_results(tmp_path: Path) -> None:
    _project(tmp_path)
    with stand_in_server(_behaviour()) as url:
        with pytest.raises(CommandError, match="budget is spent .*4/6 used.* results so far kept") as stopped:
            _autolabel(url, here=True, wait=True, budget=6, concurrency=1)
    assert AutoStepLabel.objects.filter(inferred=False).count() == 1  # one probe of 4 completions
    # counted once the requests in flight were stored
    left = services.candidates(project=Project.objects.get(slug="auto")).count()
    assert f"{left} solution(s) left unlabeled" in str(stopped.value)
    assert AutolabelSettings.objects.get().completions_used == 4
    # Options are checked before anything is queued.
    with pytest.raises(CommandError, match="--rollouts: must be an integer in"):
        _autolabel("http://127.0.0.1:9/v1", rollouts=0)
    with pytest.raises(CommandError, match="--base-url: must start with http"):
        _autolabel("ftp://x")
    # A spent budget refuses a new job before it is queued (it would fail at its first request) ...
    AutolabelSettings.objects.update(completions_budget=4)
    jobs_before = AutolabelJob.objects.count()
    with pytest.raises(CommandError, match=r"budget is spent \(4/4 used\)"):
        _autolabel("http://127.0.0.1:9/v1")
    lead = member_client(Project.objects.get(slug="auto"), "lead", Role.LEAD)
    body = {"base_url": "http://127.0.0.1:9/v1", "model": "stand-in"}
    spent = lead.post("/api/v1/projects/auto/autolabel-jobs/", body, format="json")
    assert spent.status_code == 400 and "budget" in spent.json(), spent.content
    # ... and a misspelt option is refused with the nearest name, not run on the default
    AutolabelSettings.objects.update(completions_budget=100)
    typo = lead.post("/api/v1/projects/auto/autolabel-jobs/", {**body, "rollout": 3}, format="json")
    assert typo.status_code == 400 and "did you mean rollouts?" in typo.json()["rollout"][0], typo.content
    assert AutolabelJob.objects.count() == jobs_before
    # A new job finishes what the stopped one began and counts only the steps it labeled itself.
    AutolabelSettings.objects.update(completions_budget=10_000)
    with stand_in_server(_behaviour()) as url:
        _autolabel(url, here=True, wait=True)
    second = AutolabelJob.objects.latest("pk")
    assert second.status == JobStatus.SUCCEEDED and _labels() == EXPECTED
    assert second.steps_labeled == AutoStepLabel.objects.filter(job=second).count() < 9


def test_a_worker_killed_mid_job_resumes_and_labels_no_step_twice(tmp_path: Path) -> None:
    steps = ["Start {i}.", "Go on {i}.", "{i}+1 = 0, WRONG.", "Recheck.", "# Answer\n\n0"]
    solutions = [(f"What is {i}+1?", str(i + 1), [step.format(i=i) for step in steps]) for i in range(8)]
    _project(tmp_path, solutions=solutions)
    behaviour = _behaviour(solutions, delay_s=0.4)
    purge_broker()
    with stand_in_server(behaviour) as url:
        job = services.create_job(
            project=Project.objects.get(slug="auto"),
            user=None,
            options={"base_url": url, "model": "stand-in", "rollouts": 2, "concurrency": 2},
        )
        with celery_worker() as worker:
            wait_for(lambda: AutoStepLabel.objects.filter(inferred=False).count() >= 3, timeout=90, message="results")
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)
        time.sleep(0.5)  # let the killed worker's requests reach the server
        before = {(label.solution.problem.text, label.index) for label in AutoStepLabel.objects.filter(inferred=False)}
        sent_before = len(behaviour.requests)
        job.refresh_from_db()
        assert job.status == JobStatus.RUNNING and 3 <= len(before) < 24

        # The sweep finds the heartbeat stale, puts the job back, and a new worker resumes it.
        assert services.sweep(stale_after=__import__("datetime").timedelta(0)) >= 1
        with celery_worker():
            wait_for(
                lambda: AutolabelJob.objects.get(pk=job.pk).status in (JobStatus.SUCCEEDED, JobStatus.FAILED),
                timeout=120,
                message="job finished",
            )
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.solutions_done == job.solutions_total == 8
    assert all(labels == [1, 1, -1, -1, -1] for labels in _labels().values())
    per_step = Counter(AutoStepLabel.objects.values_list("solution_id", "index", "source"))
    assert set(per_step.values()) == {1} and len(per_step) == 8 * 5
    # Nothing stored before the kill was asked for again: only in-flight requests were lost.
    asked_after = Counter(request["prompt"] for request in behaviour.requests[sent_before:])
    for text, index in before:
        steps = next(s for p, _, s in solutions if p == text)
        assert asked_after[build_prompt(text, steps[: index + 1])] == 0


def test_a_run_whose_job_was_swept_and_taken_over_stops_without_writing(tmp_path: Path) -> None:
    import threading

    from django.db import connection

    project = _project(tmp_path)
    with stand_in_server(_behaviour(delay_s=1.0)) as url:
        job = services.create_job(
            project=project, user=None, options={"base_url": url, "model": "stand-in", "rollouts": 2, "concurrency": 1}
        )
        first: list = []

        def run_first() -> None:
            first.append(services.run_job(job_id=job.pk))
            connection.close()

        thread = threading.Thread(target=run_first)
        thread.start()
        wait_for(lambda: AutolabelJob.objects.get(pk=job.pk).status == JobStatus.RUNNING, message="running")
        # It looks dead to the sweep (a zero deadline): put back and claimed by a second run here.
        assert services.sweep(stale_after=__import__("datetime").timedelta(0)) >= 1
        second = services.run_job(job_id=job.pk)
        thread.join(timeout=60)
    purge_broker()  # the sweep's message: no later worker should find it
    assert first == [None]  # the first run noticed and stopped
    assert second is not None and second.status == JobStatus.SUCCEEDED, second.error
    assert _labels() == EXPECTED
    assert set(Counter(AutoStepLabel.objects.values_list("solution_id", "index", "source")).values()) == {1}


def test_one_job_at_a_time_per_project(tmp_path: Path) -> None:
    """A second job started while one waits or runs found the first one's solutions taken and
    "succeeded" with 0 of 0, hiding the first's result on the dashboard: it is refused (409)."""
    project = _project(tmp_path)
    lead = member_client(project, "lead", Role.LEAD)
    body = {"base_url": "http://127.0.0.1:9/v1", "model": "stand-in"}
    first = lead.post("/api/v1/projects/auto/autolabel-jobs/", body, format="json")
    assert first.status_code == 202, first.content  # no worker here: it waits
    second = lead.post("/api/v1/projects/auto/autolabel-jobs/", body, format="json")
    assert second.status_code == 409, second.content
    assert f"autolabel job {first.json()['id']} is created on this project" in second.json()["detail"]
    with pytest.raises(CommandError, match="one job at a time"):
        _autolabel("http://127.0.0.1:9/v1")
    assert AutolabelJob.objects.count() == 1
    AutolabelJob.objects.update(status=JobStatus.FAILED)  # once it ends, the next may start
    assert lead.post("/api/v1/projects/auto/autolabel-jobs/", body, format="json").status_code == 202


def test_a_lead_stops_a_running_job_and_the_next_one_resumes_from_what_it_stored(tmp_path: Path) -> None:
    """Stop (POST …/cancel/): the job is `cancelled` at once, its worker sends nothing more within a
    heartbeat, what it stored stays, a second stop returns it unchanged, an ended job cannot be
    stopped, and the next job resumes without asking for a stored step again."""
    steps = ["Start {i}.", "Go on {i}.", "{i}+1 = 0, WRONG.", "Recheck.", "# Answer\n\n0"]
    solutions = [(f"What is {i}+1?", str(i + 1), [step.format(i=i) for step in steps]) for i in range(8)]
    project = _project(tmp_path, solutions=solutions)
    lead = member_client(project, "lead", Role.LEAD)
    annotator = member_client(project, "ann", Role.ANNOTATOR)
    behaviour = _behaviour(solutions, delay_s=0.4)
    purge_broker()
    with stand_in_server(behaviour) as url, celery_worker():
        body = {"base_url": url, "model": "stand-in", "rollouts": 2, "concurrency": 2}
        job_id = lead.post("/api/v1/projects/auto/autolabel-jobs/", body, format="json").json()["id"]
        wait_for(lambda: AutoStepLabel.objects.filter(inferred=False).count() >= 2, timeout=90, message="results")
        assert annotator.post(f"/api/v1/autolabel-jobs/{job_id}/cancel/").status_code == 403
        stopped = lead.post(f"/api/v1/autolabel-jobs/{job_id}/cancel/")
        assert stopped.status_code == 200, stopped.content
        assert stopped.json()["status"] == "cancelled" and stopped.json()["finished_at"]
        # the worker lets go: within a heartbeat and the requests in flight, nothing more is sent
        time.sleep(runner.HEARTBEAT_S + 1.5)
        sent = len(behaviour.requests)
        time.sleep(2.0)
        assert len(behaviour.requests) == sent
        kept = {(label.solution_id, label.index) for label in AutoStepLabel.objects.filter(inferred=False)}
        assert 2 <= len(kept) < 8 * 5
        again = lead.post(f"/api/v1/autolabel-jobs/{job_id}/cancel/")
        assert again.status_code == 200 and again.json() == {**stopped.json(), **again.json()}
        assert AutolabelJob.objects.get(pk=job_id).status == "cancelled"

        # the next job picks up where it stopped and labels no step twice
        second = lead.post("/api/v1/projects/auto/autolabel-jobs/", body, format="json")
        assert second.status_code == 202, second.content
        wait_for(
            lambda: AutolabelJob.objects.get(pk=second.json()["id"]).status in (JobStatus.SUCCEEDED, JobStatus.FAILED),
            timeout=120,
            message="second job finished",
        )
    assert AutolabelJob.objects.get(pk=second.json()["id"]).status == JobStatus.SUCCEEDED
    assert all(labels == [1, 1, -1, -1, -1] for labels in _labels().values())
    assert set(Counter(AutoStepLabel.objects.values_list("solution_id", "index", "source")).values()) == {1}
    ended = lead.post(f"/api/v1/autolabel-jobs/{second.json()['id']}/cancel/")
    assert ended.status_code == 409 and "already succeeded" in ended.json()["detail"]


def test_a_job_stopped_before_a_worker_took_it_never_runs(tmp_path: Path) -> None:
    project = _project(tmp_path)
    lead = member_client(project, "lead", Role.LEAD)
    behaviour = _behaviour()
    purge_broker()
    with stand_in_server(behaviour) as url:
        body = {"base_url": url, "model": "stand-in", "rollouts": 2}
        job_id = lead.post("/api/v1/projects/auto/autolabel-jobs/", body, format="json").json()["id"]
        assert lead.post(f"/api/v1/autolabel-jobs/{job_id}/cancel/").json()["status"] == "cancelled"
        assert services.run_job(job_id=job_id) is None  # its message, delivered late, finds nothing to claim
        assert services.sweep(stale_after=__import__("datetime").timedelta(0)) == 0
    purge_broker()
    assert behaviour.requests == [] and not AutoStepLabel.objects.exists()


def test_autolabel_wait_ends_with_an_error_when_a_lead_stops_the_job(tmp_path: Path) -> None:
    import threading

    from django.db import connection

    project = _project(tmp_path)
    lead = member_client(project, "lead", Role.LEAD)
    outcome: list = []

    def wait_in_command() -> None:  # no worker: the job waits until the lead stops it
        try:
            _autolabel("http://127.0.0.1:9/v1", wait=True)
        except CommandError as exc:
            outcome.append(str(exc))
        finally:
            connection.close()

    thread = threading.Thread(target=wait_in_command)
    thread.start()
    wait_for(lambda: AutolabelJob.objects.exists(), message="job created")
    job = AutolabelJob.objects.get()
    assert lead.post(f"/api/v1/autolabel-jobs/{job.pk}/cancel/").status_code == 200
    thread.join(timeout=30)
    purge_broker()
    assert outcome == [f"Autolabel job {job.pk} was stopped before a worker took it; nothing was labeled."]


def test_a_trace_is_rolled_out_as_a_react_transcript(tmp_path: Path) -> None:
    """Was: a trace's prefix was its texts one per line, so the model could not tell the tool's
    output from the agent's own words; each step now follows its type, as a ReAct transcript."""
    steps = [
        {"type": "thought", "text": "Multiply with the calculator."},
        {"type": "tool_call", "text": 'calc({"expr": "6*7"})'},
        {"type": "observation", "text": "43"},
        {"type": "thought", "text": "The tool says 43, WRONG."},
        {"type": "answer", "text": "43"},
    ]
    source = tmp_path / "trace.jsonl"
    line = {"kind": "trace", "problem": "What is 6*7?", "ground_truth_answer": "42", "steps": steps}
    source.write_text(json.dumps(line) + "\n")
    call_command("import_prm800k", str(source), project="auto", no_progress=True, stdout=io.StringIO())
    behaviour = Behaviour(answers={"What is 6*7?": "42"})
    purge_broker()
    with stand_in_server(behaviour) as url, celery_worker():
        assert "succeeded" in _autolabel(url, wait=True)
    texts, types = [s["text"] for s in steps], [s["type"] for s in steps]
    # binary search from the graded-wrong answer: the prefix to the observation still reaches 42,
    # the one to the WRONG thought does not
    assert sorted(request["prompt"] for request in behaviour.requests) == [
        build_prompt("What is 6*7?", texts[:3], types[:3]),
        build_prompt("What is 6*7?", texts[:4], types[:4]),
    ]
    assert behaviour.requests[0]["prompt"].startswith(
        'What is 6*7?\n\nThought: Multiply with the calculator.\nAction: calc({"expr": "6*7"})\nObservation: 43\n'
    )
    assert _labels() == {"What is 6*7?": [1, 1, 1, -1, -1]}
