"""The API's one exception handler: application errors (core.errors) as 400/403/404/409 answers.

Bodies keep DRF's shapes: a 400 maps field paths to messages ({"steps[2].rating": ["..."]}),
the others carry {"detail": "..."}. A body past DATA_UPLOAD_MAX_MEMORY_SIZE is a JSON 413 (Django
alone answers an HTML 400). Everything else goes to DRF's own handler.
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import AppError, Conflict, Forbidden, Invalid, NotFound

STATUS = {Forbidden: status.HTTP_403_FORBIDDEN, NotFound: status.HTTP_404_NOT_FOUND, Conflict: status.HTTP_409_CONFLICT}


def exception_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        detail = f"The request body is larger than the {limit:,} bytes this server reads from one request."
        return Response({"detail": detail}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    if isinstance(exc, Invalid):
        return Response(exc.errors or {"non_field_errors": [exc.message]}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, AppError):
        code = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), status.HTTP_400_BAD_REQUEST)
        body = {"detail": exc.message} if exc.code is None else {"detail": exc.message, "code": exc.code}
        return Response(body, status=code)
    return drf_exception_handler(exc, context)
