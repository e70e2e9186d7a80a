"""Server-rendered pages: the home page lists the caller's projects."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotate import selectors


@login_required
def home(request: HttpRequest) -> HttpResponse:
    memberships = selectors.memberships_for_user(user=request.user)
    return render(request, "annotate/home.html", {"memberships": memberships})
