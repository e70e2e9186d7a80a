"""Cross-cutting request checks."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import add_never_cache_headers


class RejectNulInQueryMiddleware:
    """A query parameter with a NUL character gets a 400 naming it.

    `%00` decodes to a NUL that PostgreSQL refuses in any text comparison, so a filter such as
    `?labeler=%00` would otherwise end in a 500 inside the query.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                field = name.replace("\x00", "\\u0000")
                return JsonResponse({field: ["Must not contain NUL (\\u0000) characters."]}, status=400)
        return self.get_response(request)


class StyledNotFoundMiddleware:
    """Under DEBUG (`make run`), Django answers a 404 with its technical page, which lists the URL
    patterns; users get the product's 404 page instead (annotate.views_errors). Responses that are
    not HTML (the API's JSON) and the styled page itself pass through; without DEBUG, handler404
    renders the same page and this does nothing."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from django.conf import settings

        response = self.get_response(request)
        if (
            settings.DEBUG
            and response.status_code == 404
            and response.get("Content-Type", "").startswith("text/html")
            and not getattr(response, "styled_error_page", False)
        ):
            from annotate.views_errors import not_found

            return not_found(request)
        return response


class ImportSizeLimitMiddleware:
    """An import upload larger than IMPORT_MAX_BYTES is refused (413) by its declared length before
    anything reads the body. It must run before the CSRF check: that check reads request.POST for
    session callers (the data page), which would receive and spool the whole file first."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path_info.endswith("/imports/"):
            from django.conf import settings
            from django.urls import Resolver404, resolve

            try:
                is_import = resolve(request.path_info).url_name == "project-imports"
            except Resolver404:
                is_import = False
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if is_import and length > settings.IMPORT_MAX_BYTES:
                message = f"The upload is {length} bytes; the limit is {settings.IMPORT_MAX_BYTES} bytes."
                return JsonResponse({"detail": message}, status=413)
        return self.get_response(request)


class PrivatePagesNotStoredMiddleware:
    """A signed-in person's pages are not kept by the browser: `Cache-Control: no-store` (with
    Django's never-cache set) on HTML answered to an authenticated request that set no caching of
    its own. Going Back after a submit then shows the home page's label counts as they are, not
    the copy from before; and after signing out on a shared computer, Back shows no one's
    projects. Static files (WhiteNoise answers them earlier) are untouched; the API has its own
    rule (ApiNotStoredMiddleware)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        # the content type first: the API's JSON never reads the (lazy) session user here
        if (
            response.get("Content-Type", "").startswith("text/html")
            and not response.has_header("Cache-Control")
            and getattr(getattr(request, "user", None), "is_authenticated", False)
        ):
            add_never_cache_headers(response)
        return response


class ApiNotStoredMiddleware:
    """API answers are not kept by the browser or a proxy: `Cache-Control: no-store` on every answer
    under /api/ that set no caching of its own, but the public schema and docs. A task, a draft or an
    export is one person's data of one moment: after Back and Forward the workspace must ask again
    (and learn that the solution was submitted) instead of showing the stored copy."""

    PUBLIC = ("/api/v1/schema/", "/api/v1/docs/")

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            request.path.startswith("/api/")
            and not request.path.startswith(self.PUBLIC)
            and not response.has_header("Cache-Control")
        ):
            response["Cache-Control"] = "no-store"
        return response
