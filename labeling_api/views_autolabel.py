"""Automatic step labels over HTTP (leads): autolabel jobs, and a solution's labels side by side.

Thin views over autolabel.services / selectors; who may call them is in labeling_api.access.
Annotators never get these (anchoring: they label without seeing the automatic guess).
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.access import ProjectNotFound
from autolabel import selectors, services
from autolabel.models import AutolabelJob, SearchMode
from core.errors import NotFound, unknown_name
from labeling_api.access import project_for_action
from labeling_api.openapi import SLUG, denied
from labeling_api.serializers_ml import StrictInteger, StrictNumber

JOB_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Autolabel job id.")
SOLUTION_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Solution id.")
DENIED = denied(forbidden="A member without the lead role.", not_found="No such project (or job), or not a member.")


class AutolabelJobRequestSerializer(serializers.Serializer):
    base_url = serializers.CharField(help_text="OpenAI-compatible base URL, e.g. http://gpu-box:8000/v1.")
    model = serializers.CharField()
    rollouts = StrictInteger(default=8, help_text="Completions per step prefix.")
    max_tokens = StrictInteger(default=1024)
    temperature = StrictNumber(default=0.7)
    concurrency = StrictInteger(default=16, help_text="Requests in flight at most.")
    search = serializers.ChoiceField(choices=SearchMode.values, default=SearchMode.BINARY)


class AutolabelJobSerializer(serializers.ModelSerializer):
    class Meta:
        model = AutolabelJob
        fields = [
            "id",
            "status",
            "base_url",
            "model",
            "rollouts",
            "max_tokens",
            "temperature",
            "concurrency",
            "search",
            "solutions_total",
            "solutions_done",
            "steps_labeled",
            "requests_done",
            "completions_used",
            "retries",
            "error",
            "created_at",
            "started_at",
            "heartbeat_at",
            "finished_at",
        ]
        read_only_fields = fields


class AutolabelJobListView(APIView):
    @extend_schema(
        operation_id="projects_autolabel_jobs_create",
        summary="Label open solutions automatically (Monte Carlo rollouts)",
        description=(
            "Queues a job (lead) that asks an OpenAI-compatible completions server for `rollouts` completions of "
            "step prefixes of every open solution with a ground-truth answer, grades them, and stores per step the "
            "share reaching the answer and a `+`/`-` label. Poll GET /api/v1/autolabel-jobs/{id}/."
        ),
        parameters=[SLUG],
        request=AutolabelJobRequestSerializer,
        responses={
            202: AutolabelJobSerializer,
            400: OpenApiResponse(description="A bad option, named."),
            409: OpenApiResponse(description="Another job of the project waits or runs: one at a time."),
            **DENIED,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "autolabel")
        body = AutolabelJobRequestSerializer(data=request.data)
        # a misspelt option (`rollout`) would run the job, and spend its budget, on the default
        if isinstance(request.data, dict) and (found := unknown_name(request.data, body.fields, kind="job option")):
            raise ValidationError({found[0]: [found[1]]})
        body.is_valid(raise_exception=True)
        try:
            job = services.create_job(project=project, user=request.user, options=dict(body.validated_data))
        except services.AutolabelOptionError as exc:
            raise ValidationError({name: [message] for name, message in exc.errors.items()}) from None
        return Response(AutolabelJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        operation_id="projects_autolabel_jobs_list",
        summary="Autolabel jobs of a project, newest first",
        parameters=[SLUG],
        responses={200: AutolabelJobSerializer(many=True), **DENIED},
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "autolabel")
        jobs = selectors.jobs_of(project=project)
        return Response(AutolabelJobSerializer(jobs, many=True).data)


class AutolabelJobDetailView(APIView):
    @extend_schema(
        operation_id="autolabel_jobs_retrieve",
        summary="An autolabel job's progress",
        parameters=[JOB_ID],
        responses={200: AutolabelJobSerializer, **DENIED},
    )
    def get(self, request: Request, id: int) -> Response:
        return Response(AutolabelJobSerializer(_job_for(request, id)).data)


class AutolabelJobCancelView(APIView):
    @extend_schema(
        operation_id="autolabel_jobs_cancel",
        summary="Stop an autolabel job",
        description=(
            "Stops a waiting or running job (lead): its status becomes `cancelled` at once and its worker stops "
            "within a few seconds, once the requests in flight return. Every label stored so far stays; a new job "
            "resumes where this one stopped. Stopping a stopped job returns it unchanged."
        ),
        request=None,
        parameters=[JOB_ID],
        responses={
            200: AutolabelJobSerializer,
            409: OpenApiResponse(description="The job had already succeeded or failed."),
            **DENIED,
        },
    )
    def post(self, request: Request, id: int) -> Response:
        job = _job_for(request, id)
        return Response(AutolabelJobSerializer(services.cancel_job(job=job)).data)


NO_JOB = "No such autolabel job."


def _job_for(request: Request, job_id: int) -> AutolabelJob:
    """The job, when the caller may run autolabel jobs on its project; else 404 / 403.

    A non-member gets the very 404 of a missing id: "No such project." for another project's job
    told a lead of one project which job ids exist in others (README "Security")."""
    job = selectors.job_by_id(job_id=job_id)
    if job is None:
        raise NotFound(NO_JOB)
    try:
        project_for_action(request, job.project.slug, "autolabel")
    except ProjectNotFound:
        raise NotFound(NO_JOB) from None
    return job


class SolutionLabelsView(APIView):
    @extend_schema(
        operation_id="projects_solutions_labels",
        summary="Human and automatic labels of one solution, step by step (leads)",
        parameters=[SLUG, SOLUTION_ID],
        responses={200: OpenApiTypes.OBJECT, **DENIED},
    )
    def get(self, request: Request, slug: str, id: int) -> Response:
        project = project_for_action(request, slug, "view_auto_labels")
        solution = selectors.solution_of(project=project, solution_id=id)
        if solution is None:
            raise NotFound("No Solution matches the given query.")
        return Response(selectors.solution_labels(solution=solution))
