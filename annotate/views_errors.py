"""Error pages in the product's look (config.urls handler403/404/500, CSRF_FAILURE_VIEW).

With DEBUG on, Django answers a 404 with its technical page; config.middleware.StyledNotFound
replaces that with this one, so `make run` users never see it. A 500 under DEBUG keeps Django's
traceback page for the developer running the server.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path.startswith("/api/"):  # API clients get DRF's JSON shape, never an HTML page
        return JsonResponse({"detail": "Not found."}, status=404)
    response = render(request, "404.html", status=404)
    response.styled_error_page = True
    return response


def forbidden(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    message = str(exception) if exception is not None and str(exception) else ""
    return render(request, "403.html", {"message": message}, status=403)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    message = "The form had expired or came from another site. Go back, reload the page and try again."
    return render(request, "403.html", {"message": message}, status=403)


def server_error(request: HttpRequest) -> HttpResponse:
    # No request context: the failure may be in the database or in a context processor.
    return HttpResponse(loader.get_template("500.html").render(), status=500)
