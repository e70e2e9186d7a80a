"""Rate limits per user (over all of a user's tokens and its browser session) on expensive
endpoints, by the view's `throttle_scope`.

Rates come from settings at each request (REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], set from the
environment), so they can change without a restart of the class. The counters live in Django's
cache (Redis in the real stack); when the cache cannot be reached the request is let through and
a warning logged: losing rate limits for a while is better than refusing exports and retrains
while Redis is down.
"""

from __future__ import annotations

import logging

from rest_framework import throttling
from rest_framework.exceptions import Throttled
from rest_framework.settings import api_settings

logger = logging.getLogger(__name__)


class ScopedRateThrottle(throttling.ScopedRateThrottle):
    """DRF's scoped throttle; `throttle_scope` may also map methods to scopes ({"POST": "export"})
    so that only the expensive method of a view is limited."""

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view) -> bool:
        scope = getattr(view, self.scope_attr, None)
        if isinstance(scope, dict):
            scope = scope.get(request.method)
        if not scope:
            return True
        self.scope = scope
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        try:
            return throttling.SimpleRateThrottle.allow_request(self, request, view)
        except Exception as exc:  # redis-py raises several types; any means "cache unavailable"
            logger.warning("Throttle cache unavailable, letting %s through: %s", request.path, exc)
            return True


PERIODS = {"s": "second", "m": "minute", "h": "hour", "d": "day"}


# For a throttled view: a 429 that names the limit, what counts toward it and the setting that
# raises it. DRF's own, "Request was throttled. Expected available in 2798 seconds.", reached a lead
# who had pressed Retrain now while runs were joined (each press counts), with no word of which
# limit or why. (A comment, not a docstring: the API schema takes a view's docstring, inherited too.)
class SaysItsRateLimit:
    throttle_counts: str = "requests"
    throttle_setting: str = ""

    def throttled(self, request, wait):
        scope = self.throttle_scope
        if isinstance(scope, dict):  # per method, as ScopedRateThrottle reads it
            scope = scope.get(request.method)
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(scope) or ""
        number, _, period = rate.partition("/")
        limit = f"at most {number} {self.throttle_counts} per user per {PERIODS.get(period[:1], period)}"
        raise Throttled(wait, detail=f"Request was throttled: {limit} ({self.throttle_setting}).")
