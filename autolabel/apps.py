from django.apps import AppConfig


class AutolabelConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "autolabel"
    verbose_name = "Automatic step labels"
