"""The OpenAPI schema (`GET /api/v1/schema/`): `?format=json` or `?format=yaml` picks the encoding.

DRF's own `?format=` override is off for the whole API (`URL_FORMAT_OVERRIDE`: on the export
endpoints `format` names the export format), so this view reads the parameter itself. Without it
the Accept header decides, YAML by default; an encoding the view cannot render is a 404, as DRF's
format override answers.
"""

from __future__ import annotations

from drf_spectacular.views import SpectacularAPIView
from rest_framework.negotiation import DefaultContentNegotiation


class FormatParameterNegotiation(DefaultContentNegotiation):
    """Content negotiation that takes `?format=` as the renderer's format (json, yaml)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return super().select_renderer(request, renderers, format_suffix or request.query_params.get("format") or None)


class SchemaView(SpectacularAPIView):
    content_negotiation_class = FormatParameterNegotiation
