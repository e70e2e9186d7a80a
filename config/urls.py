from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from annotate.views_account import CountedPasswordChange


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    # Resolved per request: with hashed static names the manifest is read when it exists.
    return HttpResponsePermanentRedirect(static("steplabel/favicon.svg"))


urlpatterns = [
    path("admin/", admin.site.urls),
    # Pages that do not link the icon (the admin's) still get it where browsers look by default.
    path("favicon.ico", favicon, name="favicon"),
    # Django's auth pages but the password reset ones: this deployment sends no mail, so a reset
    # form only opened SMTP connections to nowhere for anyone who typed an address. A superuser
    # sets a forgotten password in the admin or with `manage.py changepassword`.
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The old password is counted by django-axes as a login is (annotate.views_account).
    path("accounts/password_change/", CountedPasswordChange.as_view(), name="password_change"),
    path("accounts/password_change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("api/v1/", include("labeling_api.urls")),
    path("", include("annotate.urls")),
]

# Error pages in the product's look (annotate.views_errors).
handler403 = "annotate.views_errors.forbidden"
handler404 = "annotate.views_errors.not_found"
handler500 = "annotate.views_errors.server_error"
