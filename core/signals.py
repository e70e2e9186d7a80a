"""Signals between apps that may not import each other (annotate never imports ml)."""

from django.dispatch import Signal

# Sent after an import's transaction commits with new steps; kwargs: project_id. The model loop
# featurizes the new steps then (ml.services_auto), so no rescoring waits for them.
steps_imported = Signal()
