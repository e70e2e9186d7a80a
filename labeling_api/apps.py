from django.apps import AppConfig


class LabelingApiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "labeling_api"
    verbose_name = "Labeling API"
