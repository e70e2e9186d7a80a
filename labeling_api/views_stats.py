"""The dashboard's numbers: project statistics as JSON and the per-annotator table as CSV (leads only)."""

import csv
import io

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.selectors import stats
from annotate.selectors.compare import compare_stats
from autolabel import selectors as auto_labels
from labeling_api.access import project_for_action
from labeling_api.openapi import SLUG, denied
from labeling_api.serializers_stats import CompareStatsSerializer, DisagreementsSerializer, ProjectStatsSerializer
from ml import selectors as ml_selectors

DENIED = denied(forbidden="A member without the lead role.")


class ProjectStatsView(APIView):
    @extend_schema(
        operation_id="projects_stats",
        summary="Dashboard statistics of a project",
        description=(
            "Progress and ETA, throughput, rating distribution, per-annotator quality, agreement, the model's "
            "learning curve and the queue's composition. Aggregated in the database; agreement and gold accuracy "
            "read a bounded sample of recent labels."
        ),
        parameters=[SLUG],
        responses={200: ProjectStatsSerializer, **DENIED},
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "stats")
        body = stats.project_stats(project=project)
        body["auto_labels"] = auto_labels.agreement(project=project)
        body["model"] = ml_selectors.model_summary(project=project)  # annotate does not read ml
        response = Response(body)
        response["Cache-Control"] = "no-store"
        return response


class DisagreementsView(APIView):
    @extend_schema(
        operation_id="projects_disagreements",
        summary="Solutions whose annotators disagree on the first error",
        description=(
            "The solutions behind the first-error agreement figure where two labels put the first error at "
            "different steps, most recently labeled first, each with its labels: who, which step, how it ended. "
            "For settling them: mark the right label gold or reopen the solution (admin). Steps projects; a "
            "compare project's answers are in `compare-stats`."
        ),
        parameters=[SLUG],
        responses={200: DisagreementsSerializer, **DENIED},
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "stats")
        response = Response(DisagreementsSerializer(stats.disagreements(project=project)).data)
        response["Cache-Control"] = "no-store"
        return response


class CSVRenderer(BaseRenderer):
    """Lets `Accept: text/csv` through content negotiation; errors are written as their message."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        if isinstance(data, dict) and "detail" in data:
            data = data["detail"]
        return str(data).encode()


# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection, OWASP):
# text such as a name an annotator chose gets a leading apostrophe; numbers are written as they are.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _inert(value):
    return f"'{value}" if isinstance(value, str) and value.startswith(_FORMULA_START) else value


class AnnotatorCsvView(APIView):
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        operation_id="projects_stats_annotators_csv",
        summary="The per-annotator table as CSV",
        parameters=[SLUG],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV with a header row."),
            **DENIED,
        },
    )
    def get(self, request: Request, slug: str) -> HttpResponse:
        project = project_for_action(request, slug, "stats")
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=stats.ANNOTATOR_CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: _inert(v) for k, v in row.items()} for row in stats.annotator_rows(project=project))
        response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
        stamp = timezone.now().strftime("%Y%m%dT%H%M%S")
        response["Content-Disposition"] = f'attachment; filename="{project.slug}-annotators-{stamp}.csv"'
        response["Cache-Control"] = "no-store"
        return response


class CompareStatsView(APIView):
    @extend_schema(
        operation_id="projects_compare_stats",
        summary="Quality of a compare project's preferences",
        description=(
            "Position bias (share of decided answers that chose the left candidate; 0.5 is none), agreement between "
            "annotators on the same pair, agreement with the graded answers where one candidate is right and the "
            "other wrong, and accuracy on gold pairs; each as {share, n, ci95}."
        ),
        parameters=[SLUG],
        responses={200: CompareStatsSerializer, **DENIED},
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "stats")
        return Response(compare_stats(project=project))
