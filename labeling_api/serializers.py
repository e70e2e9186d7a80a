from rest_framework import serializers

from annotate.models import Project


class ProjectSerializer(serializers.ModelSerializer):
    roles = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = [
            "slug",
            "name",
            "labeling_mode",
            "overlap",
            "qc_rate",
            "selection_strategy",
            "current_generation",
            "show_ground_truth",
            "critique_required",
            "rate_observations",
            "roles",
        ]

    def get_roles(self, project: Project) -> list[str]:
        roles_by_project: dict[int, list[str]] = self.context.get("roles_by_project", {})
        return sorted(roles_by_project.get(project.pk, []))
