from django.apps import AppConfig


class MlConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "ml"
    verbose_name = "PRM models"

    def ready(self) -> None:
        from ml import checks, services_auto  # noqa: F401  (checks: registers them)

        services_auto.connect()  # retrain after every N new labels
