"""Who requested a training run moves from config.extra.requested_by (listed to ML engineers) to a
column that only the admin shows."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def move_requester(apps, schema_editor):
    TrainingRun = apps.get_model("ml", "TrainingRun")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    for run in TrainingRun.objects.filter(config__extra__has_key="requested_by").iterator():
        extra = dict(run.config.get("extra") or {})
        username = extra.pop("requested_by", None)
        run.requested_by = User.objects.filter(username=username).first() if username else None
        run.config = {**run.config, "extra": extra}
        run.save(update_fields=["requested_by", "config"])


class Migration(migrations.Migration):
    dependencies = [
        ("ml", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="trainingrun",
            name="requested_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.RunPython(move_requester, migrations.RunPython.noop),
    ]
