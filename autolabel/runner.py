"""Running one autolabel job: which solutions it labels, the completion budget it reserves from,
and the runner that probes step prefixes through a thread pool (autolabel.rollouts: prompts,
search and labels) and stores every result the moment it arrives.

Solutions are loaded a window at a time and the database is touched only from the main thread;
the request threads only call the completion endpoint.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from annotate.models import Project, Solution, Step
from autolabel.endpoint_policy import EndpointRefused, check_base_url
from autolabel.models import (
    AutolabelJob,
    AutolabelSettings,
    AutolabelStatus,
    AutoSource,
    AutoStepLabel,
    SearchMode,
)
from autolabel.rollouts import (
    CompletionClient,
    EndpointError,
    StepResult,
    build_prompt,
    extract_answer,
    labels_from,
    search,
)
from core.models import JobStatus
from prm800k import grading

logger = logging.getLogger(__name__)

LOAD_BATCH = 200  # solutions read from the database at a time
# Until one completion carries a final answer, probes without any are not stored; after this many
# completions without one the job fails. A chat model on /completions or a max_tokens too small
# answered "I am not sure." to every prompt, and the job "succeeded" with `-` on every step.
ANSWERLESS_LIMIT = 8
# While requests are in flight the job's heartbeat and counters (retries) are written at least this
# often: at 30 s a job retrying a failing server read "retries: 0" until it failed.
HEARTBEAT_S = 5.0


class BudgetExhausted(Exception):
    pass


class JobLost(Exception):
    """The job is no longer this run's: a lead stopped it, or the sweep gave it to another run (this
    one looked dead). Stop without touching it."""


def candidates(*, project: Project) -> Any:
    """Open solutions with a ground-truth answer whose steps are not all rollout-labeled yet. Gold
    and screening questions are left out: their labels are known, and rolling them out spent the
    budget on them (the dashboard's open count leaves them out too)."""
    return (
        Solution.objects.filter(project=project, is_open=True, n_steps__gt=0, is_gold=False, is_screening=False)
        .exclude(Q(problem__ground_truth_answer__isnull=True) | Q(problem__ground_truth_answer=""))
        .annotate(n_rollout=Count("auto_labels", filter=Q(auto_labels__source=AutoSource.ROLLOUT)))
        .filter(n_rollout__lt=F("n_steps"))
        .order_by("id")
    )


def reserve(*, project_id: int, n: int) -> bool:
    """Take n completions from the project's budget, atomically; False when it would overrun."""
    return bool(
        AutolabelSettings.objects.filter(
            project_id=project_id, completions_used__lte=F("completions_budget") - n
        ).update(completions_used=F("completions_used") + n)
    )


def refund(*, project_id: int, n: int) -> None:
    AutolabelSettings.objects.filter(project_id=project_id, completions_used__gte=n).update(
        completions_used=F("completions_used") - n
    )


@dataclass(slots=True)
class _Solution:
    id: int
    problem: str
    truth: str
    answer_correct: bool | None
    steps: list[str]
    types: list[str]  # a trace's step types (rollouts.TRACE_PREFIXES); empty strings for math and code
    measured: dict[int, StepResult] = field(default_factory=dict)
    in_flight: set[int] = field(default_factory=set)

    def estimates(self) -> dict[int, float]:
        return {i: r.estimate for i, r in self.measured.items() if r.estimate is not None}


class Runner:
    """Runs one claimed job: probes prefixes through a thread pool, stores every result as it arrives."""

    def __init__(self, job: AutolabelJob, token: str) -> None:
        self.job = job
        self.token = token
        self.retries = 0  # counted by the request threads, written by the main thread (no DB in threads)
        self.answered = False  # some completion of this run had a final answer (ANSWERLESS_LIMIT)
        self.answerless = 0  # completions without one, while none had
        self.lock = threading.Lock()
        # set once the job is no longer this run's (stopped by a lead, or taken over): requests in
        # flight then give up instead of retrying, so the worker is free within one request
        self.lost = threading.Event()
        self.client = CompletionClient(
            base_url=job.base_url,
            model=job.model,
            max_tokens=job.max_tokens,
            temperature=job.temperature,
            timeout_s=settings.AUTOLABEL_REQUEST_TIMEOUT_S,
            max_retries=settings.AUTOLABEL_MAX_RETRIES,
            backoff_s=settings.AUTOLABEL_BACKOFF_S,
            on_retry=self._count_retry,
        )

    def _count_retry(self, reason: str) -> None:
        if self.lost.is_set():
            raise JobLost(self.job.pk)
        logger.warning("autolabel job %s: retrying after %s", self.job.pk, reason)
        with self.lock:
            self.retries += 1

    def _beat(self, **updates: Any) -> None:
        """Write progress and the heartbeat, if this run still holds the job; else raise JobLost."""
        with self.lock:
            retries, self.retries = self.retries, 0
        if retries:
            updates["retries"] = F("retries") + retries
        held = AutolabelJob.objects.filter(pk=self.job.pk, status=JobStatus.RUNNING, claim=self.token).update(
            heartbeat_at=timezone.now(), **updates
        )
        if not held:
            self.lost.set()
            if updates:  # a lead's stop: what this run stored and spent is still the job's to count
                AutolabelJob.objects.filter(pk=self.job.pk, claim=self.token, status=AutolabelStatus.CANCELLED).update(
                    **updates
                )
            raise JobLost(self.job.pk)

    def _settle(self, in_flight: dict[Future, tuple[_Solution, int]]) -> None:
        """The job is no longer this run's. After a lead's stop the requests in flight still return,
        and their completions were taken from the budget: their probes are stored and counted like
        any other (they were dropped, so the job said fewer completions than the budget charged).
        A run the sweep replaced stores nothing more."""
        if not AutolabelJob.objects.filter(pk=self.job.pk, claim=self.token, status=AutolabelStatus.CANCELLED).exists():
            return
        for future, (solution, index) in list(in_flight.items()):
            try:
                texts = self._with_answers(future.result())
            except (EndpointError, JobLost):  # it gave up once the job was lost: nothing came back
                texts = None
            if texts is None:
                refund(project_id=self.job.project_id, n=self.job.rollouts)
                continue
            try:
                self._store_probe(solution, index, texts)
            except JobLost:
                pass  # expected: its counts went to the stopped job

    def _load(self, ids: list[int]) -> list[_Solution]:
        rows = list(
            Solution.objects.filter(pk__in=ids)
            .order_by("id")
            .values("id", "problem__text", "problem__ground_truth_answer", "answer_correct")
        )
        steps: dict[int, list[str]] = {i: [] for i in ids}
        types: dict[int, list[str]] = {i: [] for i in ids}
        rows_of_steps = Step.objects.filter(solution_id__in=ids).order_by("solution_id", "index")
        for solution_id, text, step_type in rows_of_steps.values_list("solution_id", "text", "step_type"):
            steps[solution_id].append(text)
            types[solution_id].append(step_type)
        solutions = {
            row["id"]: _Solution(
                id=row["id"],
                problem=row["problem__text"],
                truth=row["problem__ground_truth_answer"],
                answer_correct=row["answer_correct"],
                steps=steps[row["id"]],
                types=types[row["id"]],
            )
            for row in rows
        }
        # Resume: what an earlier run of any job measured for these solutions stands.
        for label in AutoStepLabel.objects.filter(solution_id__in=ids, source=AutoSource.ROLLOUT):
            solutions[label.solution_id].measured[label.index] = StepResult(
                index=label.index,
                label=label.label,
                estimate=label.estimate,
                n_completions=label.n_completions,
                n_correct=label.n_correct,
                inferred=label.inferred,
            )
        return list(solutions.values())

    def run(self) -> None:
        job = self.job
        try:  # again here: the name may resolve elsewhere now than when the job was created
            check_base_url(job.base_url)
        except EndpointRefused as exc:
            raise EndpointError(f"base_url {exc}") from None
        ids = list(candidates(project=job.project).values_list("id", flat=True))
        if job.solutions_total == 0 or job.solutions_total < job.solutions_done + len(ids):
            job.solutions_total = job.solutions_done + len(ids)
            AutolabelJob.objects.filter(pk=job.pk).update(solutions_total=job.solutions_total)
        # Solutions are loaded a window at a time, so memory stays flat on big projects.
        windows = (ids[start : start + LOAD_BATCH] for start in range(0, len(ids), LOAD_BATCH))
        pending: list[_Solution] = []

        def refill() -> None:
            while len(pending) < max(2 * job.concurrency, LOAD_BATCH // 2):
                window = next(windows, None)
                if window is None:
                    return
                for solution in self._load(window):
                    self._record_graded_last_step(solution)
                    if not self._maybe_complete(solution):
                        pending.append(solution)

        in_flight: dict[Future, tuple[_Solution, int]] = {}
        failure: Exception | None = None
        with ThreadPoolExecutor(max_workers=job.concurrency, thread_name_prefix="autolabel") as pool:
            refill()
            try:
                while pending or in_flight:
                    while failure is None and len(in_flight) < job.concurrency:
                        probe = self._next_probe(pending)
                        if probe is None:
                            break
                        solution, index = probe
                        if not reserve(project_id=job.project_id, n=job.rollouts):
                            failure = BudgetExhausted()  # its message once the requests in flight are stored
                            break
                        typed = solution.types[: index + 1] if any(solution.types) else None
                        prompt = build_prompt(solution.problem, solution.steps[: index + 1], typed)
                        solution.in_flight.add(index)
                        in_flight[pool.submit(self.client.complete, prompt, job.rollouts)] = (solution, index)
                    if not in_flight:
                        break
                    done, _ = wait(list(in_flight), timeout=HEARTBEAT_S, return_when=FIRST_COMPLETED)
                    self._beat()  # also while long requests are in flight: only a dead run goes stale
                    for future in done:
                        solution, index = in_flight.pop(future)
                        solution.in_flight.discard(index)
                        try:
                            texts = self._with_answers(future.result())
                        except EndpointError as exc:
                            refund(project_id=job.project_id, n=job.rollouts)
                            failure = failure or exc
                            continue
                        if texts is None:  # held back: the prefix is probed again
                            refund(project_id=job.project_id, n=job.rollouts)
                            continue
                        self._store_probe(solution, index, texts)
                        if self._maybe_complete(solution):
                            pending.remove(solution)
                    if failure is None:
                        refill()
                    if failure is not None and not in_flight:
                        break
            except JobLost:
                self._settle(in_flight)
                raise
        if isinstance(failure, BudgetExhausted):
            raise BudgetExhausted(
                f"the project's completion budget is spent ({self._budget_text()}); "
                f"{candidates(project=job.project).count()} solution(s) left unlabeled, results so far kept"
            )
        if failure is not None:
            raise failure

    def _with_answers(self, texts: list[str]) -> list[str] | None:
        """`texts`, once any completion of the run has carried a final answer; None for a probe
        with none before that (not stored); EndpointError once ANSWERLESS_LIMIT such completions came."""
        if self.answered or any(extract_answer(text) is not None for text in texts):
            self.answered = True
            return texts
        self.answerless += max(1, len(texts))  # an answer with no choices counts too, or it would loop
        if self.answerless < ANSWERLESS_LIMIT:
            return None
        sample = (texts[0] if texts else "").strip().replace("\n", " ")[:80]
        raise EndpointError(
            f"{self.job.base_url}: none of the first {self.answerless} completions ends in a final answer "
            f'("# Answer", "The answer is", "Final Answer:" or \\boxed{{}}), e.g. {sample!r}; a chat model on '
            "/completions, or max_tokens too small? No rollout label was stored"
        )

    def _budget_text(self) -> str:
        budget = AutolabelSettings.objects.filter(project_id=self.job.project_id).first()
        return f"{budget.completions_used}/{budget.completions_budget} used" if budget else "no budget"

    def _next_probe(self, pending: list[_Solution]) -> tuple[_Solution, int] | None:
        for solution in pending:
            if self.job.search == SearchMode.BINARY and solution.in_flight:
                continue  # a binary search probes one prefix at a time
            index, _ = search(
                n_steps=len(solution.steps),
                measured=solution.estimates(),
                answer_correct=solution.answer_correct,
                mode=self.job.search,
            )
            if self.job.search == SearchMode.FULL:
                missing = [
                    i for i in range(len(solution.steps)) if i not in solution.measured and i not in solution.in_flight
                ]
                index = missing[0] if missing else None
            if index is not None:
                return solution, index
        return None

    def _record_graded_last_step(self, solution: _Solution) -> None:
        """A graded final answer is the last prefix's estimate (1 or 0) without any rollout."""
        last = len(solution.steps) - 1
        if solution.answer_correct is None or last in solution.measured:
            return
        value = 1.0 if solution.answer_correct else 0.0
        result = StepResult(index=last, label=1 if value else -1, estimate=value, inferred=True)
        self._save([result], solution)
        solution.measured[last] = result

    def _store_probe(self, solution: _Solution, index: int, texts: list[str]) -> None:
        correct = sum(grading.grade_answer(solution.truth, extract_answer(text)) is True for text in texts)
        result = StepResult(
            index=index,
            label=1 if correct else -1,
            estimate=correct / len(texts),
            n_completions=len(texts),
            n_correct=correct,
        )
        self._save([result], solution)
        solution.measured[index] = result
        self._beat(requests_done=F("requests_done") + 1, completions_used=F("completions_used") + len(texts))

    def _maybe_complete(self, solution: _Solution) -> bool:
        """When the search is over, store the inferred labels; True when the solution is done."""
        n = len(solution.steps)
        index, first_zero = search(
            n_steps=n, measured=solution.estimates(), answer_correct=solution.answer_correct, mode=self.job.search
        )
        if index is not None or solution.in_flight:
            return False
        results = labels_from(n_steps=n, measured=solution.measured, first_zero=first_zero)
        new = [r for r in results if r.index not in solution.measured]
        with transaction.atomic():
            self._save(new, solution)
            AutolabelJob.objects.filter(pk=self.job.pk).update(
                solutions_done=F("solutions_done") + 1, heartbeat_at=timezone.now()
            )
        return True

    def _save(self, results: list[StepResult], solution: _Solution) -> None:
        """Store results and count them as this job's steps labeled as they are stored (counted when a
        solution was finished, a job stopped or failed midway said fewer steps than it stored)."""
        if not results:
            return
        # ignore_conflicts: the unique (solution, index, source) constraint keeps the first label of a step.
        AutoStepLabel.objects.bulk_create(
            [
                AutoStepLabel(
                    solution_id=solution.id,
                    index=r.index,
                    source=AutoSource.ROLLOUT,
                    label=r.label,
                    estimate=r.estimate,
                    n_completions=r.n_completions,
                    n_correct=r.n_correct,
                    inferred=r.inferred,
                    job=self.job,
                )
                for r in results
            ],
            ignore_conflicts=True,
        )
        AutolabelJob.objects.filter(pk=self.job.pk).update(steps_labeled=F("steps_labeled") + len(results))
