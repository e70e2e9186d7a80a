from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("labeling_api.urls")),
    path("", include("annotate.urls")),
]

# Error pages in the product's look (annotate.views_errors).
handler403 = "annotate.views_errors.forbidden"
handler404 = "annotate.views_errors.not_found"
handler500 = "annotate.views_errors.server_error"
