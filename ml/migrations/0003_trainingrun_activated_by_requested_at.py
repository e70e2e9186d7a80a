"""A lead's rollback holds: who activated a run by hand, and when a run was last asked for (a run
asked for before the rollback finishes without taking over; ml.services.runs._finish_run)."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def requested_when_created(apps, schema_editor):
    TrainingRun = apps.get_model("ml", "TrainingRun")
    TrainingRun.objects.update(requested_at=models.F("created_at"))


class Migration(migrations.Migration):
    dependencies = [
        ("ml", "0002_trainingrun_requested_by"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="trainingrun",
            name="activated_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="trainingrun",
            name="requested_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.RunPython(requested_when_created, migrations.RunPython.noop),
    ]
