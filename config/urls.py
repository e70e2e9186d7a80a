from django.contrib import admin
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    # Resolved per request: with hashed static names the manifest is read when it exists.
    return HttpResponsePermanentRedirect(static("steplabel/favicon.svg"))


urlpatterns = [
    path("admin/", admin.site.urls),
    # Pages that do not link the icon (the admin's) still get it where browsers look by default.
    path("favicon.ico", favicon, name="favicon"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("labeling_api.urls")),
    path("", include("annotate.urls")),
]

# Error pages in the product's look (annotate.views_errors).
handler403 = "annotate.views_errors.forbidden"
handler404 = "annotate.views_errors.not_found"
handler500 = "annotate.views_errors.server_error"
