"""Admin for the labeling domain: leads browse and correct data here.

Big tables (Solution, Step, Assignment, Annotation) use raw-id or autocomplete widgets for their
foreign keys, so no page renders a dropdown of every row; hashes and derived counters are
read-only because imports, submits and exports rely on them. One module per area below; each
registers its models when this package is imported (admin autodiscovery). Scoping to a lead's
projects: annotate/admin_scope.py.
"""

from annotate.admin import accounts, compare, labels, people, problems, records, tokens  # noqa: F401  (registers the models)
