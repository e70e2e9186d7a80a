"""Thin DRF views: validate, call one service or selector, serialize."""

from collections import defaultdict

from rest_framework import generics

from annotate import selectors
from annotate.models import Membership
from labeling_api.serializers import ProjectSerializer


class ProjectListView(generics.ListAPIView):
    """Projects the caller belongs to, with the caller's roles in each."""

    serializer_class = ProjectSerializer
    pagination_class = None

    def get_queryset(self):
        return selectors.projects_for_user(user=self.request.user)

    def get_serializer_context(self):
        context = super().get_serializer_context()
        roles: dict[int, list[str]] = defaultdict(list)
        for project_id, role in Membership.objects.filter(user=self.request.user).values_list("project_id", "role"):
            roles[project_id].append(role)
        context["roles_by_project"] = roles
        return context
