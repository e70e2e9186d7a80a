from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotate"
    verbose_name = "Labeling"

    def ready(self) -> None:
        # Membership signals: a removed member's leases are released however the row goes.
        from annotate.services import members  # noqa: F401

        # A first-wrong mark's label goes with its preference: its solution counts it no more.
        from annotate.services.compare import marks  # noqa: F401

        # Deleted labels leave tombstones for incremental exports, however the row goes.
        from annotate.services.exports import deletions  # noqa: F401
