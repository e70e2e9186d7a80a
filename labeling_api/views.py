"""Thin DRF views: validate, call one service or selector, serialize."""

from collections import defaultdict

from rest_framework import generics

from annotate import selectors
from labeling_api.serializers import ProjectSerializer


class ProjectListView(generics.ListAPIView):
    """Projects the caller belongs to, with the caller's roles in each."""

    serializer_class = ProjectSerializer
    pagination_class = None

    def get_queryset(self):
        return selectors.projects_for_user(user=self.request.user)

    def get_serializer_context(self):
        context = super().get_serializer_context()
        context["roles_by_project"] = defaultdict(list, selectors.roles_by_project(user=self.request.user))
        return context
