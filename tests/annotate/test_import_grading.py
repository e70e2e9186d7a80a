"""Imports grade answers in their validation pass, with a time limit, and never fail with a 500.

Issue 12: `x^{3000}+1` against `(x+1)^{3000}` ran ~20 s inside an import, holding the project's
export lock; a NUL character or a 5,000-digit answer answered 500 and left the job `running`.
"""

import io
import json
import threading
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from annotate.models import ImportJob, Project, Role, Solution
from annotate.services import exports
from annotate.services.imports import import_file
from annotate.services.imports import jobs as import_jobs
from core.models import JobStatus
from tests.api_clients import member_client


def _plain(answer: str, truth: str = "7", **extra) -> str:
    return json.dumps(
        {
            "problem": f"Solve for {answer[:20]}.",
            "ground_truth_answer": truth,
            "steps": ["s", f"# Answer\n\n{answer}"],
            **extra,
        }
    )


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "upload.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _upload(client, slug: str, path: Path) -> dict:
    """Upload through the API, run the import job as a worker would (inline here), return the job as polled."""
    started = client.post(
        f"/api/v1/projects/{slug}/imports/", {"file": io.BytesIO(path.read_bytes())}, format="multipart"
    )
    assert started.status_code == 202, started.content
    import_jobs.run_import_job(import_id=started.data["id"])
    return client.get(started.data["url"]).data


@pytest.mark.django_db
def test_nul_character_is_a_line_error_and_the_job_fails_cleanly(tmp_path):
    project = Project.objects.create(slug="nul")
    lead = member_client(project, "lead-nul", Role.LEAD)
    path = _write(tmp_path, _plain("7"), _plain("7").replace('"s"', '"bad\\u0000step"'))
    job = _upload(lead, "nul", path)
    assert job["status"] == "failed", job
    assert job["errors"] == [
        {"line": 2, "field": "steps[0]", "message": "contains a NUL character (\\u0000), which cannot be stored"}
    ]
    job = ImportJob.objects.get(project=project)
    assert job.status == JobStatus.FAILED and job.finished_at is not None
    assert not Solution.objects.filter(project=project).exists()


@pytest.mark.django_db
def test_five_thousand_digit_answer_is_imported_and_graded(tmp_path):
    project = Project.objects.create(slug="digits")
    lead = member_client(project, "lead-digits", Role.LEAD)
    huge = "9" * 5000
    path = _write(tmp_path, _plain(huge, truth=huge), _plain(huge[:-1] + "8", truth=huge))
    job = _upload(lead, "digits", path)
    assert job["status"] == "succeeded", job
    assert ImportJob.objects.get(project=project).status == JobStatus.SUCCEEDED
    verdicts = sorted(Solution.objects.filter(project=project).values_list("answer_correct", flat=True))
    assert verdicts == [False, True]


@pytest.mark.django_db
def test_over_long_plain_fields_are_line_errors(tmp_path):
    path = _write(tmp_path, _plain("7", subject="x" * 101), _plain("7", level="l" * 21))
    err = io.StringIO()
    with pytest.raises(CommandError, match="2 bad line"):
        call_command("import_prm800k", str(path), project="long", no_progress=True, stderr=err)
    assert "line 1: subject: longer than 100 characters" in err.getvalue()
    assert "line 2: level: longer than 20 characters" in err.getvalue()


@pytest.mark.django_db(transaction=True)
def test_huge_exponent_is_graded_at_once_off_the_main_thread(tmp_path):
    project = Project.objects.create(slug="power")
    path = _write(tmp_path, _plain("x^{3000}+1", truth="(x+1)^{3000}"))
    timing: dict[str, float] = {}

    def run() -> None:
        started = time.monotonic()
        import_file(project=project, path=path)
        timing["seconds"] = time.monotonic() - started
        connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    assert timing["seconds"] < 5, timing  # was ~20 s of math-verify with no effective limit
    assert Solution.objects.get(project=project).answer_correct is False


@pytest.mark.django_db(transaction=True)
def test_exports_do_not_wait_for_an_import_that_is_grading(tmp_path):
    """A slow answer (sympy killed after its 5 s limit) is graded before the import takes the export lock."""
    project = Project.objects.create(slug="unlocked")
    path = _write(tmp_path, _plain("10000000!/7", truth="2.5"))
    done: dict[str, float] = {}

    def run_import() -> None:
        import_file(project=project, path=path)
        done["import"] = time.monotonic()
        connection.close()

    thread = threading.Thread(target=run_import, daemon=True)
    thread.start()
    time.sleep(1.0)  # the import is grading now
    exports.stamp_export_sequence(project=project)  # takes the project's export lock
    done["export"] = time.monotonic()
    thread.join(timeout=60)
    assert done["export"] < done["import"] - 2, done
    assert Solution.objects.get(project=project).answer_correct is None  # timed out: ungraded, not wrong


@pytest.mark.django_db
def test_empty_upload_is_refused_as_empty(tmp_path):
    project = Project.objects.create(slug="blank")
    lead = member_client(project, "lead-blank", Role.LEAD)
    empty = tmp_path / "blank.jsonl"
    empty.write_text("\n \n\n")  # a zero-byte upload is refused earlier, by the upload's own check
    job = _upload(lead, "blank", empty)
    assert job["status"] == "failed"
    assert job["errors"] == [{"line": 0, "field": "(file)", "message": "the file is empty: it has no JSON lines"}]
    assert ImportJob.objects.get(project=project).status == JobStatus.FAILED


@pytest.mark.django_db
def test_a_plain_solution_ending_in_a_boxed_answer_is_graded(tmp_path):
    """Found by the lead walkthrough: ProcessBench's solutions, turned into plain lines, end in
    `\\boxed{}` with no `# Answer`, and all of them were left ungraded (so the default order, which
    stratifies by the grade, and the PRM's graded-answer input had nothing)."""
    project = Project.objects.create(slug="boxed")
    lines = [
        {"problem": "p1", "ground_truth_answer": "\\frac{1}{2}", "steps": ["a", "So it is $\\boxed{\\frac{1}{2}}$."]},
        {"problem": "p2", "ground_truth_answer": "3", "steps": ["$\\boxed{2}$ at first", "No: $x = \\boxed{4}$."]},
        {"problem": "p3", "ground_truth_answer": "3", "steps": ["$\\boxed{3}$", "so we stop here."]},
        {"problem": "p4", "ground_truth_answer": "3", "steps": ["a", "Not $\\boxed{9}$.\n# Answer\n\n3"]},
    ]
    import_file(project=project, path=_write(tmp_path, *map(json.dumps, lines)))
    graded = dict(Solution.objects.filter(project=project).values_list("problem__text", "answer_correct"))
    # the last step's last box; a box in an earlier step is not the answer; `# Answer` comes first
    assert graded == {"p1": True, "p2": False, "p3": None, "p4": True}
    finals = dict(Solution.objects.filter(project=project).values_list("problem__text", "final_answer"))
    assert finals == {"p1": "\\frac{1}{2}", "p2": "4", "p3": None, "p4": "3"}
