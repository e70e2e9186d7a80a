"""Export and import over HTTP: a streamed export, export jobs with downloads, and file imports.

Thin views over annotate.services.exports / imports; who may call them is in labeling_api.access.
"""

import os

from django.conf import settings
from django.http import FileResponse, Http404, StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate import selectors
from annotate.models import Export
from annotate.services import exports, imports
from core.models import JobStatus
from labeling_api.access import project_for_action
from labeling_api.negotiation import FileOrJsonErrors
from labeling_api.openapi import SLUG, denied, throttled
from labeling_api.serializers_export import (
    DeletionsRequestSerializer,
    DeletionsSerializer,
    ExportJobRequestSerializer,
    ExportJobSerializer,
    ImportJobSerializer,
    ImportRequestSerializer,
    StreamRequestSerializer,
)
from labeling_api.throttling import SaysItsRateLimit

EXPORT_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Export job id.")
# The stream's response headers, in the schema's 200 answer (not only its prose), so a client
# generated from /api/v1/schema/ reads the cursor an incremental pipeline keeps.
EXPORT_CURSOR = OpenApiParameter(
    "X-Export-Cursor",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[200],
    description="Pass as `since` next time to get only newer labels. Absent for automatic labels (`labels=auto`), "
    "which export whole.",
)
EXPORT_DELETED = OpenApiParameter(
    "X-Export-Deleted",
    OpenApiTypes.INT,
    OpenApiParameter.HEADER,
    response=[200],
    description="With `since` only: how many labels were deleted since that cursor (`0` when none); "
    "`export/deletions/` with the same `since` lists their keys.",
)
EXPORT_CORRECTED = OpenApiParameter(
    "X-Export-Corrected",
    OpenApiTypes.INT,
    OpenApiParameter.HEADER,
    response=[200],
    description="With `since` only: how many records of this pull correct a version that a pull up to that "
    "cursor may have delivered (`0` when none): replace PRM800K records by their key (`labeler`, `timestamp`); "
    "rows without a key (TRL and the others) need a rebuild from a full pull.",
)
DENIED = denied(forbidden="A member without the lead or ml_engineer role.")


class StreamedExportView(SaysItsRateLimit, APIView):
    throttle_scope = "export"  # labeling_api.throttling: per-user rate limit
    throttle_counts = "export requests (streamed exports and export jobs together, refused ones too)"
    throttle_setting = "THROTTLE_EXPORT"
    content_negotiation_class = FileOrJsonErrors  # Accept: application/x-ndjson is served, not a 406

    @extend_schema(
        operation_id="projects_export_stream",
        summary="Stream an export as JSONL",
        description=(
            "Streams `application/x-ndjson`, one record or row per line, in export order. The response header "
            "`X-Export-Cursor` carries the cursor to pass as `since` next time, so a pipeline pulls only new labels "
            "(never skipping one that was still being written, never repeating one). With `since`, the header "
            "`X-Export-Deleted` counts the labels deleted since that cursor (`export/deletions/` names them), and "
            "`X-Export-Corrected` the records of this pull that correct a version delivered up to it. With "
            "`trailer=true` a last line counts the lines before it; a stream cut short lacks it."
        ),
        parameters=[SLUG, StreamRequestSerializer, EXPORT_CURSOR, EXPORT_DELETED, EXPORT_CORRECTED],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(OpenApiTypes.STR, description="JSON Lines."),
            400: OpenApiResponse(description="A bad option, named."),
            **DENIED,
            **throttled("export"),
        },
    )
    def get(self, request: Request, slug: str) -> StreamingHttpResponse:
        project = project_for_action(request, slug, "export")
        query = StreamRequestSerializer(data=request.query_params, context={"project": project})
        query.is_valid(raise_exception=True)
        options = query.validated_data["options"]
        plan = exports.plan_export(project=project, options=options)
        chunks = exports.iter_chunks(plan=plan)
        if query.validated_data["trailer"]:
            chunks = exports.with_end_line(chunks, plan=plan)
        response = StreamingHttpResponse(chunks, content_type="application/x-ndjson")
        if plan.cursor:
            response["X-Export-Cursor"] = plan.cursor
        if options.since:  # counted after the plan numbered the labels: a later deletion is after its cursor
            deleted = exports.deletions_since(
                project=project, since=options.since, preferences=options.format == "preference"
            )
            response["X-Export-Deleted"] = str(deleted.count())
            response["X-Export-Corrected"] = str(exports.corrections_in(plan=plan))
        stamp = timezone.now().strftime("%Y%m%dT%H%M%S")
        response["Content-Disposition"] = f'inline; filename="{project.slug}-{options.format}-{stamp}.jsonl"'
        response["Cache-Control"] = "no-store"
        return response


class ExportDeletionsView(APIView):
    @extend_schema(
        operation_id="projects_export_deletions",
        summary="Labels deleted since a cursor",
        description=(
            "Tombstones of labels that an export may have delivered and that were deleted since (a superuser in "
            "the admin, or with their solution, pair or problem), each by its PRM800K key (`labeler`, `timestamp`). "
            "An incremental pipeline pulls new labels with `since=C`, then this with the same `C`, drops the "
            "records whose key is listed (or rebuilds from a full pull for a format without a key), and keeps the "
            "export's new cursor. A deletion listed twice, or of a record you never pulled, is safe to drop again."
        ),
        parameters=[SLUG, DeletionsRequestSerializer],
        responses={200: DeletionsSerializer, 400: OpenApiResponse(description="A bad option, named."), **DENIED},
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "export")
        query = DeletionsRequestSerializer(data=request.query_params, context={"project": project})
        query.is_valid(raise_exception=True)
        options = query.validated_data["options"]
        deletions = exports.deletions_since(
            project=project, since=options.since, preferences=options.format == "preference"
        )
        response = Response(DeletionsSerializer({"deletions": deletions}).data)
        response["Cache-Control"] = "no-store"
        return response


class ExportJobListView(SaysItsRateLimit, APIView):
    throttle_scope = {"POST": "export"}  # labeling_api.throttling: per-user rate limit
    throttle_counts = StreamedExportView.throttle_counts
    throttle_setting = StreamedExportView.throttle_setting

    @extend_schema(
        operation_id="projects_exports_create",
        summary="Start an export job",
        description="Runs in a Celery worker and writes a file (gzip optional). Poll GET /api/v1/exports/{id}/.",
        parameters=[SLUG],
        request=ExportJobRequestSerializer,
        responses={
            202: ExportJobSerializer,
            400: OpenApiResponse(description="A bad option, named."),
            **DENIED,
            **throttled("export"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "export")
        body = ExportJobRequestSerializer(data=request.data, context={"project": project})
        body.is_valid(raise_exception=True)
        export = exports.create_export_job(
            project=project,
            user=request.user,
            options=body.validated_data["options"],
            gzip_output=body.validated_data["gzip"],
        )
        return Response(ExportJobSerializer(export, context={"request": request}).data, status=202)

    @extend_schema(
        operation_id="projects_exports_list",
        summary="Your export jobs in this project",
        parameters=[SLUG],
        responses={200: ExportJobSerializer(many=True), **DENIED},
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "export")
        jobs = selectors.exports_of(project=project, user=request.user)
        return Response(ExportJobSerializer(jobs, many=True, context={"request": request}).data)


def _own_export(request: Request, export_id: int) -> Export:
    """An export job is visible to the user who requested it (and superusers), if they may still export."""
    export = selectors.export_by_id(export_id=export_id)
    if export is None or (export.requested_by_id != request.user.pk and not request.user.is_superuser):
        raise Http404("No such export of yours.")
    project_for_action(request, export.project.slug, "export")
    return export


class ExportJobDetailView(APIView):
    @extend_schema(
        operation_id="exports_retrieve",
        summary="An export job's progress",
        parameters=[EXPORT_ID],
        responses={200: ExportJobSerializer, **DENIED},
    )
    def get(self, request: Request, id: int) -> Response:
        return Response(ExportJobSerializer(_own_export(request, id), context={"request": request}).data)


class ExportDownloadView(APIView):
    content_negotiation_class = FileOrJsonErrors  # Accept: application/x-ndjson or application/gzip is served

    @extend_schema(
        operation_id="exports_download",
        summary="Download a finished export",
        parameters=[EXPORT_ID],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(OpenApiTypes.BINARY, description="The file."),
            (200, "application/gzip"): OpenApiResponse(OpenApiTypes.BINARY, description="The file, of a gzip job."),
            409: OpenApiResponse(description="Not finished."),
            **DENIED,
        },
    )
    def get(self, request: Request, id: int):
        export = _own_export(request, id)
        if export.status != JobStatus.SUCCEEDED or not export.file_path or not os.path.exists(export.file_path):
            return Response({"detail": f"The export is {export.status}, not ready."}, status=409)
        gz = export.file_path.endswith(".gz")
        return FileResponse(
            open(export.file_path, "rb"),
            as_attachment=True,
            filename=os.path.basename(export.file_path),
            content_type="application/gzip" if gz else "application/x-ndjson",
        )


IMPORT_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Import job id.")


class ImportView(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        operation_id="projects_imports_create",
        summary="Import a JSONL file (a worker job)",
        description=(
            "Stores the upload and answers 202 with the job; a worker validates the whole file first: a file "
            "with any bad line ends `failed` with the first 20 errors (line, field, message) and changes nothing. "
            "Poll the job's `url`. Importing the same file again creates nothing. gzip files are read as such."
        ),
        parameters=[SLUG],
        request={"multipart/form-data": ImportRequestSerializer},
        responses={
            202: ImportJobSerializer,
            400: OpenApiResponse(description="No file, or more than one."),
            413: OpenApiResponse(description="The file is larger than IMPORT_MAX_BYTES."),
            **DENIED,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "import")
        # Refused by its declared length, before the body is read or stored.
        length = int(request.META.get("CONTENT_LENGTH") or 0)
        if length > settings.IMPORT_MAX_BYTES:
            return Response(
                {"detail": f"The upload is {length} bytes; the limit is {settings.IMPORT_MAX_BYTES} bytes."},
                status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            )
        body = ImportRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        job = imports.start_import(project=project, user=request.user, upload=body.validated_data["file"])
        return Response(ImportJobSerializer(job, context={"request": request}).data, status=202)

    @extend_schema(
        operation_id="projects_imports_list",
        summary="The project's import jobs, newest first (the last 100)",
        parameters=[SLUG],
        responses={200: ImportJobSerializer(many=True), **DENIED},
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_action(request, slug, "import")
        jobs = selectors.imports_of(project=project)
        return Response(ImportJobSerializer(jobs, many=True, context={"request": request}).data)


class ImportJobDetail(APIView):
    @extend_schema(
        operation_id="projects_imports_retrieve",
        summary="An import job's progress and outcome",
        parameters=[SLUG, IMPORT_ID],
        responses={200: ImportJobSerializer, **DENIED},
    )
    def get(self, request: Request, slug: str, id: int) -> Response:
        project = project_for_action(request, slug, "import")
        job = selectors.import_job(project=project, job_id=id)
        if job is None:
            raise Http404("No such import in this project.")
        return Response(ImportJobSerializer(job, context={"request": request}).data)
