"""OpenAPI pieces shared by the views: the slug parameter, the access-denied answers and a schema for
bodies that are one of several shapes."""

from drf_spectacular.openapi import AutoSchema
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


def throttled(scope: str) -> dict[int, OpenApiResponse]:
    """429 of a rate-limited endpoint (labeling_api.throttling; the THROTTLE_<SCOPE> setting)."""
    return {
        429: OpenApiResponse(
            description=f"Over the rate limit of the `{scope}` scope (per user, over all their tokens; "
            f"THROTTLE_{scope.upper()}); `Retry-After` says when to try again."
        )
    }


class RequiredBodySchema(AutoSchema):
    """A view whose request body is required although its schema is a oneOf (drf-spectacular marks
    a body required only when one serializer has required fields)."""

    def _get_request_body(self, direction="request"):
        body = super()._get_request_body(direction)
        if body:
            body["required"] = True
        return body
