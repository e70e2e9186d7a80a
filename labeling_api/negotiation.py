"""Content negotiation of the endpoints whose success is a file or a stream, not a serializer's JSON.

The streamed export and an export job's download answer `application/x-ndjson` (or
`application/gzip`), the type the OpenAPI docs name, so a client (Swagger's "Try it out" among
them) sends `Accept: application/x-ndjson`. DRF negotiates that against its JSON renderers and
answered 406 before the view ran. These views set their body's type themselves; negotiation only
picks how an error (400, 403, 404, 409, 429) is written, and that is JSON whatever the client
accepted, as RFC 9110 allows for an error.
"""

from __future__ import annotations

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


class FileOrJsonErrors(DefaultContentNegotiation):
    """The usual choice (JSON, or the browsable API for a browser); an Accept that none of the
    renderers meets gets JSON instead of a 406."""

    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            json_renderer = next(r for r in renderers if r.media_type == "application/json")
            return json_renderer, json_renderer.media_type
