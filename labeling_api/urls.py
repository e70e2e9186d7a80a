from django.urls import path, register_converter
from drf_spectacular.views import SpectacularSwaggerSplitView

from core.converters import RowIdConverter
from labeling_api import (
    views,
    views_autolabel,
    views_export,
    views_health,
    views_ml,
    views_queue,
    views_schema,
    views_stats,
)

# <rowid:id>: an id past 64 bits is a 404, not an overflow (core.converters).
register_converter(RowIdConverter, "rowid")

urlpatterns = [
    path("schema/", views_schema.SchemaView.as_view(), name="schema"),
    # The split view serves Swagger UI's init script as a file: no inline script, so the CSP holds.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("projects/", views.ProjectListView.as_view(), name="project-list"),
    path("health/", views_health.HealthView.as_view(), name="health"),
    # Work queue (annotate.services.queue / submit)
    path("projects/<slug:slug>/tasks/next/", views_queue.NextTaskView.as_view(), name="task-next"),
    path("projects/<slug:slug>/me/", views_queue.MyProgressView.as_view(), name="project-me"),
    path("assignments/<rowid:id>/heartbeat/", views_queue.HeartbeatView.as_view(), name="assignment-heartbeat"),
    path("assignments/<rowid:id>/skip/", views_queue.SkipView.as_view(), name="assignment-skip"),
    path("assignments/<rowid:id>/draft/", views_queue.DraftView.as_view(), name="assignment-draft"),
    path("assignments/<rowid:id>/submit/", views_queue.SubmitView.as_view(), name="assignment-submit"),
    # Export and import (annotate.services.exports / imports)
    path("projects/<slug:slug>/export/", views_export.StreamedExportView.as_view(), name="project-export"),
    path(
        "projects/<slug:slug>/export/deletions/",
        views_export.ExportDeletionsView.as_view(),
        name="project-export-deletions",
    ),
    path("projects/<slug:slug>/exports/", views_export.ExportJobListView.as_view(), name="project-exports"),
    path("exports/<rowid:id>/", views_export.ExportJobDetailView.as_view(), name="export-detail"),
    path("exports/<rowid:id>/download/", views_export.ExportDownloadView.as_view(), name="export-download"),
    path("projects/<slug:slug>/imports/", views_export.ImportView.as_view(), name="project-imports"),
    path(
        "projects/<slug:slug>/imports/<rowid:id>/",
        views_export.ImportJobDetail.as_view(),
        name="project-import-detail",
    ),
    # Dashboard numbers (annotate.selectors.stats)
    path("projects/<slug:slug>/stats/", views_stats.ProjectStatsView.as_view(), name="project-stats"),
    path("projects/<slug:slug>/disagreements/", views_stats.DisagreementsView.as_view(), name="project-disagreements"),
    path("projects/<slug:slug>/compare-stats/", views_stats.CompareStatsView.as_view(), name="project-compare-stats"),
    path("projects/<slug:slug>/stats/annotators.csv", views_stats.AnnotatorCsvView.as_view(), name="project-stats-csv"),
    # The model loop (ml.services)
    path("projects/<slug:slug>/training-runs/", views_ml.TrainingRunListView.as_view(), name="project-training-runs"),
    path(
        "projects/<slug:slug>/training-runs/<rowid:id>/",
        views_ml.TrainingRunDetailView.as_view(),
        name="training-run-detail",
    ),
    path(
        "projects/<slug:slug>/training-runs/<rowid:id>/activate/",
        views_ml.TrainingRunActivateView.as_view(),
        name="training-run-activate",
    ),
    path("prm/score/", views_ml.ScoreView.as_view(), name="prm-score"),
    # Automatic step labels (autolabel app): jobs, and labels side by side for leads
    path(
        "projects/<slug:slug>/autolabel-jobs/",
        views_autolabel.AutolabelJobListView.as_view(),
        name="project-autolabel-jobs",
    ),
    path("autolabel-jobs/<rowid:id>/", views_autolabel.AutolabelJobDetailView.as_view(), name="autolabel-job-detail"),
    path(
        "autolabel-jobs/<rowid:id>/cancel/",
        views_autolabel.AutolabelJobCancelView.as_view(),
        name="autolabel-job-cancel",
    ),
    path(
        "projects/<slug:slug>/solutions/<rowid:id>/labels/",
        views_autolabel.SolutionLabelsView.as_view(),
        name="solution-labels",
    ),
]
