from django.apps import AppConfig


class AutolabelConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "autolabel"
    verbose_name = "Automatic step labels"

    def ready(self) -> None:
        # annotate's imports and exports reach the automatic labels through this seam (it never imports us).
        from annotate.services import auto_labels
        from autolabel import exporting, importing

        auto_labels.register(
            auto_labels.AutoLabelStore(
                write_math_shepherd=importing.write_batch,
                math_shepherd_lines=exporting.auto_lines,
                trl_rows=exporting.auto_trl_rows,
            )
        )
