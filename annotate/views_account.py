"""A signed-in user's own pages: API token and password; and the invite link's visit (a new account,
or the signed-in one joining)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import authenticate, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from annotate.access import allowed_actions
from annotate.forms import AcceptInviteForm
from annotate.models import Role
from annotate.pages import export_links
from annotate.selectors.pages import home_rows
from annotate.services import events, team, tokens

TOKEN_PLACEHOLDER = "YOUR_TOKEN"
# --fail-with-body: an error answer (a 429 when the rate limit is spent, a 403) makes curl exit
# non-zero instead of saving it under the file name as if it were the export (README, export API).
CURL = "curl -sS --fail-with-body"


def curl_lines(request: HttpRequest, key: str) -> list[dict]:
    """Ready commands per project: each export format of its kind for those who may export, else
    the caller's progress."""
    lines = []
    for row in home_rows(user=request.user):
        project = row["project"]
        slug = project.slug
        if "export" in allowed_actions(user=request.user, roles=set(row["roles"])):
            for link in export_links(project):
                url = request.build_absolute_uri(link["path"])
                name = f"{slug}-{link['format']}"
                # -D: the answer's headers beside the file, X-Export-Cursor among them (the next `since`)
                command = f'{CURL} -D {name}.headers -H "Authorization: Token {key}" "{url}" -o {name}.jsonl'
                lines.append({"slug": slug, "format": link["format"], "what": link["what"], "command": command})
        else:
            url = request.build_absolute_uri(reverse("project-me", args=[slug]))
            command = f'{CURL} -H "Authorization: Token {key}" "{url}"'
            lines.append({"slug": slug, "format": "", "what": "your progress", "command": command})
    return lines


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def account_token(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        # Rotating kills the old token at once: only with the box ticked (the browser asks too).
        if tokens.current_token(user=request.user) is not None and request.POST.get("confirm") != "yes":
            messages.error(request, "Not rotated: tick the box to confirm that the old token stops working now.")
            return redirect("account-token")
        # Shown once, on the page this redirects to; the session forgets it there.
        request.session["new_api_token"] = tokens.issue_token(user=request.user)
        return redirect("account-token")
    new_key = request.session.pop("new_api_token", None)
    current = tokens.current_token(user=request.user)
    expires = tokens.expires_at(current) if current else None
    lines = curl_lines(request, new_key or TOKEN_PLACEHOLDER)
    context = {
        "new_key": new_key,
        "current": current,
        "expires": expires,
        "expired": expires is not None and expires <= timezone.now(),
        "curl": lines,
        "has_exports": any(line["format"] for line in lines),
        "api_docs": reverse("api-docs"),
    }
    return render(request, "annotate/account/token.html", context)


class CountedPasswordForm(PasswordChangeForm):
    """The old password is checked by authenticate(), not user.check_password(): django-axes then
    counts a wrong one as a failed login for this username and address and locks the pair after
    AXES_FAILURE_LIMIT, as the login page does. Without it, a session left open (a shared computer)
    let anyone try passwords as fast as the server answered, and keep the one that matched."""

    def __init__(self, user, *args, request: HttpRequest, **kwargs):
        super().__init__(user, *args, **kwargs)
        self.request = request

    def clean_old_password(self) -> str:
        old_password = self.cleaned_data["old_password"]
        if authenticate(self.request, username=self.user.get_username(), password=old_password) is None:
            raise ValidationError(self.error_messages["password_incorrect"], code="password_incorrect")
        return old_password


class AdminCountedPasswordForm(CountedPasswordForm):
    required_css_class = "required"  # as the admin's own AdminPasswordChangeForm


class CountedPasswordChange(auth_views.PasswordChangeView):
    """Django's password change with the old password counted (CountedPasswordForm): every page
    that asks for the old password is this view (accounts/password_change/, the admin's: annotate.admin)."""

    form_class = CountedPasswordForm

    def get_form_kwargs(self) -> dict:
        return {**super().get_form_kwargs(), "request": self.request}


@method_decorator(never_cache, name="dispatch")
class PasswordChange(CountedPasswordChange):
    template_name = "annotate/account/password.html"
    success_url = reverse_lazy("account-password")

    def form_valid(self, form):
        response = super().form_valid(form)
        events.record(actor=self.request.user, action="password.changed")
        messages.success(self.request, "Your password is changed.")
        return response


def _invite_invalid(request: HttpRequest) -> HttpResponse:
    """Says why the link fails; marked as a styled page so `make run` (DEBUG) keeps it rather than
    swapping in the generic 404 (config.middleware.StyledNotFoundMiddleware)."""
    response = render(request, "annotate/account/invite_invalid.html", status=404)
    response.styled_error_page = True
    return response


@never_cache
@require_http_methods(["GET", "POST"])
def invite_accept(request: HttpRequest, secret: str) -> HttpResponse:
    invite = team.open_invite(secret)
    if invite is None:
        return _invite_invalid(request)
    if request.method == "POST" and request.POST.get("action") == "join":
        return _join_signed_in(request, secret)
    form = AcceptInviteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            user = team.accept_invite(
                secret=secret, username=data["username"], password=data["password1"], email=data["email"]
            )
        except team.TeamError:
            return _invite_invalid(request)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(
            request, f"Welcome, {user.get_username()}: you are in {invite.project.name or invite.project.slug}."
        )
        return redirect("home")
    role_names = [Role(r).label for r in invite.roles]
    context = {"form": form, "invite": invite, "roles": role_names, "login_next": urlencode({"next": request.path})}
    return render(request, "annotate/account/invite.html", context)


def _join_signed_in(request: HttpRequest, secret: str) -> HttpResponse:
    """The signed-in account joins with the link (someone the lead invited who has an account)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.path)
    try:
        joined = team.join_with_invite(secret=secret, user=request.user)
    except team.TeamError:
        return _invite_invalid(request)
    name = joined.project.name or joined.project.slug
    if joined.added:
        messages.success(request, f"You joined {name} as {' and '.join(Role(r).label for r in joined.added)}.")
    else:
        messages.info(
            request,
            f"You already hold these roles in {name}; the link was left unused for whoever it was meant for.",
        )
    return redirect("home")
