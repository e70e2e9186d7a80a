"""The admin's own password page checks the old password as the site's does: through django-axes,
so wrong guesses lock the username and address (annotate.views_account.CountedPasswordForm).

AdminSite.get_urls wraps `self.password_change` when the URLconf is loaded, after this module set
it on the one site, so /admin/password_change/ is this view, still behind the admin's staff check.
"""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from annotate.views_account import AdminCountedPasswordForm, CountedPasswordChange


def password_change(request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
    """django.contrib.admin.sites.AdminSite.password_change with the counted form."""
    site = admin.site
    request.current_app = site.name
    return CountedPasswordChange.as_view(
        form_class=AdminCountedPasswordForm,
        success_url=reverse("admin:password_change_done", current_app=site.name),
        extra_context={**site.each_context(request), **(extra_context or {})},
    )(request)


admin.site.password_change = password_change
