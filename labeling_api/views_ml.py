"""The model loop over HTTP: start and list training runs, activate (roll back), score steps.

Thin views over ml.services; who may call them is in labeling_api.access.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling_api.access import project_for_action
from labeling_api.openapi import SLUG, denied, throttled
from labeling_api.serializers_ml import (
    ScoreRequestSerializer,
    ScoreResponseSerializer,
    TrainingRunRequestedSerializer,
    TrainingRunRequestSerializer,
    TrainingRunSerializer,
)
from labeling_api.throttling import SaysItsRateLimit
from ml import selectors as ml_selectors
from ml import services
from ml.prm.config import ConfigError

RUN_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Training run id.")
DENIED = denied(forbidden="A member without the required role.", not_found="No such project (or run), or not a member.")


class TrainingRunListView(SaysItsRateLimit, APIView):
    throttle_scope = "retrain"
    throttle_counts = "training-run requests (Retrain now included, and a request that joined a run)"
    throttle_setting = "THROTTLE_RETRAIN"

    def get_throttles(self):
        return super().get_throttles() if self.request.method == "POST" else []  # listing is cheap

    @extend_schema(
        operation_id="projects_training_runs_create",
        summary="Retrain the project's PRM",
        description=(
            "Queues a training run on every label so far (lead or ml_engineer). One run per project at a time: "
            "a request while a run waits joins it (`merged: true`; settings it asks for replace the waiting run's); "
            "so does a request while one is running when no "
            "label has arrived since that run started and the request asks for the same settings (the answer is "
            "the running run); otherwise a request while one is running creates the next run, which starts when "
            "the running one ends. A request without settings when no run waits or runs and no label has arrived "
            "since the active model's run started answers that run (`merged: true`, `succeeded`): there is nothing "
            "new to train on. When it succeeds the new model is activated, the "
            "generation advances and the queue is reordered by the project's selection strategy."
        ),
        parameters=[SLUG],
        request=TrainingRunRequestSerializer,
        responses={
            202: TrainingRunRequestedSerializer,
            400: OpenApiResponse(description="An unknown or bad training setting, named (with the nearest known one)."),
            **DENIED,
            **throttled("retrain"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "retrain")
        body = TrainingRunRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            run = services.request_retrain(
                project=project,
                user=request.user,
                config=body.validated_data["config"],
                trigger="api",
                skip_if_current=True,
            )
        except ConfigError as exc:  # a setting that this project's kind of model does not take
            raise ValidationError({"config": {exc.field: [exc.message]}}) from None
        return Response(TrainingRunRequestedSerializer(run).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        operation_id="projects_training_runs_list",
        summary="The project's training runs, newest first",
        description="Status, label count, held-out metrics (AUROC for Negative steps, accuracy, ECE, first-error F1).",
        parameters=[SLUG],
        responses={200: TrainingRunSerializer(many=True), **DENIED},
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "view_models")
        runs = ml_selectors.runs_of(project=project)
        return Response(TrainingRunSerializer(runs, many=True).data)


class TrainingRunDetailView(APIView):
    @extend_schema(
        operation_id="projects_training_runs_retrieve",
        summary="One training run",
        description=(
            "The run that `POST .../training-runs/` answered with, to follow it until it ends: status, label count, "
            "held-out metrics, its error when it failed, and `note` when it succeeded but was not activated."
        ),
        parameters=[SLUG, RUN_ID],
        responses={200: TrainingRunSerializer, **DENIED},
    )
    def get(self, request: Request, slug: str, id: int) -> Response:
        project = project_for_action(request, slug, "view_models")
        return Response(TrainingRunSerializer(ml_selectors.run_of(project=project, run_id=id)).data)


class TrainingRunActivateView(APIView):
    @extend_schema(
        operation_id="projects_training_runs_activate",
        summary="Activate a training run (roll back)",
        description=(
            "Lead only. Makes an earlier succeeded run the active model, advances the generation and reorders the "
            "queue with it. A run queued or training at that moment finishes without replacing it (`note` says "
            "so); a training run requested afterwards replaces it as usual."
        ),
        parameters=[SLUG, RUN_ID],
        request=None,
        responses={
            200: TrainingRunSerializer,
            409: OpenApiResponse(description="The run did not succeed or its model file is missing."),
            **DENIED,
        },
    )
    def post(self, request: Request, slug: str, id: int) -> Response:
        project = project_for_action(request, slug, "activate_model")
        run = ml_selectors.run_of(project=project, run_id=id)
        run = services.rollback(
            project=project, run=run, by=request.user
        )  # RunNotActivatable: 409 (labeling_api.exceptions)
        return Response(TrainingRunSerializer(run).data)


class ScoreView(SaysItsRateLimit, APIView):
    throttle_scope = "score"
    throttle_counts = "scoring requests"
    throttle_setting = "THROTTLE_SCORE"

    @extend_schema(
        operation_id="prm_score",
        summary="Score candidate solutions with a project's active PRM",
        description=(
            "Per step P(+1), P(0), P(-1) and an uncertainty; per solution the product of P(not -1) over its steps "
            "(PRM800K) and the minimum. For reranking best-of-N samples: `rank_by` (product, min, or reward: a "
            "compare project's reward model) adds `ranking`, the indices best first. Lead or ml_engineer."
        ),
        request=ScoreRequestSerializer,
        responses={
            200: ScoreResponseSerializer,
            400: OpenApiResponse(
                description='A malformed request, named by field path: `{"solutions[1][2]": ["Must be a string."]}`.'
            ),
            409: OpenApiResponse(description="The project has no active model yet."),
            **DENIED,
            **throttled("score"),
        },
    )
    def post(self, request: Request) -> Response:
        body = ScoreRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        project = project_for_action(request, data["project"], "score")
        # NoActiveModel answers 409 (labeling_api.exceptions).
        result = services.rank_solutions(
            project=project, problem=data["problem"], solutions=data["solutions"], rank_by=data.get("rank_by")
        )
        return Response(ScoreResponseSerializer(result).data)
