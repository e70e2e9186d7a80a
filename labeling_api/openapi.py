"""OpenAPI pieces shared by the views: the slug parameter and the access-denied answers."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse

SLUG = OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="Project slug.")


def denied(*, forbidden: str, not_found: str = "No such project, or not a member.") -> dict[int, OpenApiResponse]:
    """401 / 403 / 404 as labeling_api.access answers them, described for one endpoint family."""
    return {
        401: OpenApiResponse(description="No or bad token."),
        403: OpenApiResponse(description=forbidden),
        404: OpenApiResponse(description=not_found),
    }
