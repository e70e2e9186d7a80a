"""The work queue over HTTP: claim the next task, heartbeat, skip, save a draft, submit, progress.

Thin views over annotate.services.queue / submit. Who may call them is annotate.access, asked on
every request with the caller's current roles: only annotators and leads claim and work on
assignments; an assignment answers 404 to anyone but its annotator and to an annotator who is no
longer a member of its project (a removed member cannot submit, skip or be handed the next task).
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import Assignment
from annotate.selectors import progress
from annotate.services import leases, queue, submit
from labeling_api.access import assignment_for_request, project_and_roles_for_action
from labeling_api.openapi import SLUG, RequiredBodySchema
from labeling_api.serializers_preference import PreferenceInSerializer, submit_preference_payload
from labeling_api.serializers_queue import (
    DetailSerializer,
    DraftOutSerializer,
    LeaseSerializer,
    MyProgressSerializer,
    SkipOutSerializer,
    SubmitOutSerializer,
    TaskSerializer,
    task_data,
)
from labeling_api.serializers_submit import SubmitInSerializer, submit_payload

ASSIGNMENT_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Assignment id.")
NEXT = OpenApiParameter(
    "next",
    OpenApiTypes.BOOL,
    OpenApiParameter.QUERY,
    required=False,
    description=(
        "Claim and return the next task in the same response: true (the default) or false (also 1/0, "
        "yes/no); anything else is refused with 400."
    ),
)
NOT_YOURS = OpenApiResponse(DetailSerializer, description="No such assignment of yours.")
CONFLICT = OpenApiResponse(DetailSerializer, description="The assignment is finished, skipped or its lease was lost.")


def _task(assignment: Assignment | None) -> dict | None:
    # Plain data, not TaskSerializer(...).data: ground_truth_answer must be absent (not null) when hidden.
    return None if assignment is None else task_data(assignment)


def _wants_next(request: Request) -> bool:
    """`?next=`: read before the submit or skip is stored, so a bad value changes nothing (400)."""
    value = request.query_params.get("next", "true").strip().lower()
    if value not in {"1", "true", "yes", "0", "false", "no"}:
        raise ValidationError({"next": [f"Must be true or false, got {value!r}."]})
    return value in {"1", "true", "yes"}


class NextTaskView(APIView):
    @extend_schema(
        operation_id="tasks_next",
        summary="Claim the next task",
        description=(
            "Returns the caller's active assignment again if it has one (reload-safe), else claims the "
            "highest-priority solution the caller may label (screening first where the project requires it, "
            "gold questions mixed in at the project's QC rate). 204 when nothing is left for the caller; 403 "
            "when the caller is not an annotator or lead of the project, or failed screening."
        ),
        parameters=[SLUG],
        responses={
            200: TaskSerializer,
            204: OpenApiResponse(description="Nothing to label now."),
            403: DetailSerializer,
            404: DetailSerializer,
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        project, roles = project_and_roles_for_action(request, slug, "label")
        assignment = queue.claim_next(project=project, user=request.user, roles=roles)
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(_task(assignment))


class MyProgressView(APIView):
    @extend_schema(
        operation_id="projects_me",
        summary="My progress in a project",
        description="Solutions, steps and active time labeled today and overall, and the screening standing.",
        parameters=[SLUG],
        responses={200: MyProgressSerializer, 404: DetailSerializer},
    )
    def get(self, request: Request, slug: str) -> Response:
        project, _ = project_and_roles_for_action(request, slug, "view_progress")
        return Response(MyProgressSerializer(progress.annotator_progress(project=project, user=request.user)).data)


class HeartbeatView(APIView):
    @extend_schema(
        operation_id="assignments_heartbeat",
        summary="Extend the lease",
        description="An expired lease is renewed too while nobody else has taken the solution; 409 otherwise.",
        request=None,
        parameters=[ASSIGNMENT_ID],
        responses={200: LeaseSerializer, 404: NOT_YOURS, 409: CONFLICT},
    )
    def post(self, request: Request, id: int) -> Response:
        assignment, _ = assignment_for_request(request, id)
        assignment = leases.heartbeat(assignment=assignment, user=request.user)
        return Response(LeaseSerializer(assignment).data)


class SkipView(APIView):
    @extend_schema(
        operation_id="assignments_skip",
        summary="Release without labels",
        description="The solution is never served to the caller again. Screening questions cannot be skipped.",
        request=None,
        parameters=[ASSIGNMENT_ID, NEXT],
        responses={200: SkipOutSerializer, 404: NOT_YOURS, 409: CONFLICT},
    )
    def post(self, request: Request, id: int) -> Response:
        assignment, roles = assignment_for_request(request, id)
        wants_next = _wants_next(request)
        assignment = leases.skip(assignment=assignment, user=request.user)
        data = dict(LeaseSerializer(assignment).data)
        data["next"] = None
        if wants_next:
            following, _ = submit.claim_after_submit(project=assignment.project, user=request.user, roles=roles)
            data["next"] = _task(following)
        return Response(data)


class DraftView(APIView):
    @extend_schema(
        operation_id="assignments_draft",
        summary="Save the work in progress",
        description="Any JSON value (the workspace's state); returned as `draft` when the task is served again.",
        request=OpenApiTypes.ANY,
        parameters=[ASSIGNMENT_ID],
        responses={200: DraftOutSerializer, 400: DetailSerializer, 404: NOT_YOURS, 409: CONFLICT},
    )
    def put(self, request: Request, id: int) -> Response:
        assignment, _ = assignment_for_request(request, id)
        assignment = leases.save_draft(assignment=assignment, user=request.user, draft=request.data)
        return Response({"id": assignment.pk, "saved_at": assignment.updated_at})


class SubmitView(APIView):
    schema = RequiredBodySchema()  # a step task's body or a pair's

    @extend_schema(
        operation_id="assignments_submit",
        summary="Submit the labels",
        description=(
            "Validated against the project's labeling mode; errors name the field path (e.g. `steps[2].rating`). "
            "In a compare project the body is `{idempotency_key, preference: A|B|tie, strength: 1|2|3, "
            "total_time_ms, note?, first_wrong?: {A: index|null, B: index|null}}` (A and B as served) and the "
            "answer carries `preference_id` instead of `annotation_id`. "
            "A repeat with the same idempotency key returns the first result (200, created=false). A late submit "
            "after the lease expired is accepted while nobody else took the solution, else 409 and the payload "
            "is kept: `GET /projects/{slug}/me/` lists it under `refused_submits`. The response carries the next "
            "task, already claimed. 404 when the caller is not (or no longer) a member of the assignment's project."
        ),
        request=PolymorphicProxySerializer(
            component_name="SubmitBody",
            serializers=[SubmitInSerializer, PreferenceInSerializer],
            resource_type_field_name=None,
        ),
        parameters=[ASSIGNMENT_ID, NEXT],
        responses={
            201: SubmitOutSerializer,
            200: OpenApiResponse(SubmitOutSerializer, description="A repeat of an earlier submit."),
            400: OpenApiResponse(description="Validation errors by field path."),
            404: NOT_YOURS,
            409: CONFLICT,
        },
    )
    def post(self, request: Request, id: int) -> Response:
        assignment, roles = assignment_for_request(request, id)
        wants_next = _wants_next(request)
        if assignment.comparison_id is not None:  # a compare project's pair
            preference, created = submit_preference_payload(
                assignment=assignment, user=request.user, payload=request.data
            )
            data = {"preference_id": preference.pk, "assignment_id": assignment.pk, "created": created, "next": None}
        else:
            result = submit_payload(assignment=assignment, user=request.user, payload=request.data)
            created = result.created
            data = {
                "annotation_id": result.annotation.pk,
                "assignment_id": assignment.pk,
                "created": result.created,
                "next": None,
            }
        if wants_next:
            following, message = submit.claim_after_submit(project=assignment.project, user=request.user, roles=roles)
            data["next"] = _task(following)
            if message:
                data["detail"] = message
        return Response(data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
