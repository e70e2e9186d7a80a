"""Signals between apps that may not import each other (annotate never imports ml)."""

from django.dispatch import Signal

# Sent after an import's transaction commits with new steps; kwargs: project_id. The model loop
# featurizes the new steps then (ml.services_auto), so no rescoring waits for them.
steps_imported = Signal()

# Sent after a settings change that changes how the queue is ordered (the selection strategy or
# the control share) commits; kwargs: project_id. The model loop reorders the open queue with the
# project's active model then (ml.services_auto); without one, the next import or retrain does.
queue_order_changed = Signal()
