"""API tokens for superusers: whose, since when, and revoking one (delete). DRF's own admin listed
every full key, and a key is a password: anyone who read the list could act as its user, while the
token page promises a key is shown once. Here a key shows as its first characters only
(annotate.models.ApiToken), and no token is made here: a user makes their own on the token page,
or a superuser runs `manage.py drf_create_token`."""

from django.contrib import admin
from django.http import HttpRequest
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from annotate.models import ApiToken
from annotate.services import tokens

admin.site.unregister(TokenProxy)


@admin.register(ApiToken)
class ApiTokenAdmin(TokenAdmin):
    list_display = ("key_start", "user", "created", "expires")
    fields = readonly_fields = ("key_start", "user", "created", "expires")

    @admin.display(description="Key")
    def key_start(self, token: ApiToken) -> str:
        return token.key_start

    @admin.display(description="Expires")
    def expires(self, token: ApiToken) -> str:
        """When the API stops taking it (API_TOKEN_MAX_AGE_DAYS), or that it never does."""
        when = tokens.expires_at(token)
        return "never (no API_TOKEN_MAX_AGE_DAYS)" if when is None else f"{when:%Y-%m-%d %H:%M} UTC"

    # Superusers only: leads are staff with every annotate permission (annotate.admin_scope), and
    # this model lives in annotate.
    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return False
