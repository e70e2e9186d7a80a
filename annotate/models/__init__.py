"""The labeling domain: projects and members, problems and their model-written solutions,
claims (assignments) and finished labelings (annotations), import and export jobs, compare pairs and
preferences; one module per idea below, every model importable from `annotate.models`.

A PRM800K record maps onto Problem (question), Solution + Step (pre-generated steps) and
Annotation (label). The label's steps are stored as ordered JSON text so a record imported from
PRM800K exports back with the same values and key order; the per-annotation counters beside it
let statistics aggregate without parsing JSON.
"""

from annotate.models.audit import AnnotationRevision, AuditEvent
from annotate.models.choices import (
    AnnotationSource,
    AssignmentStatus,
    ContentKind,
    FinishReason,
    LabelingMode,
    QueueOrigin,
    Role,
    ScreeningStatus,
    Strategy,
    TaskKind,
)
from annotate.models.compare import Comparison, PairReason, Preference, PreferenceChoice
from annotate.models.deletions import DeletedLabel
from annotate.models.jobs import Export, ImportJob
from annotate.models.labels import Annotation, Assignment
from annotate.models.problems import Problem, Solution, Step
from annotate.models.projects import MAX_CONTROL_SHARE, AnnotatorStatus, Invite, LabelerProfile, Membership, Project
from annotate.models.tokens import ApiToken

__all__ = [
    "MAX_CONTROL_SHARE",
    "Annotation",
    "AnnotationRevision",
    "AnnotationSource",
    "AnnotatorStatus",
    "ApiToken",
    "Assignment",
    "AssignmentStatus",
    "AuditEvent",
    "Comparison",
    "ContentKind",
    "DeletedLabel",
    "Export",
    "FinishReason",
    "ImportJob",
    "Invite",
    "LabelerProfile",
    "LabelingMode",
    "Membership",
    "PairReason",
    "Preference",
    "PreferenceChoice",
    "Problem",
    "Project",
    "QueueOrigin",
    "Role",
    "ScreeningStatus",
    "Solution",
    "Step",
    "Strategy",
    "TaskKind",
]
