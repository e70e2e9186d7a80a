from django.apps import AppConfig


class CoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "Shared machinery"

    def ready(self) -> None:
        from core import checks  # noqa: F401  (registers the deployment checks)
