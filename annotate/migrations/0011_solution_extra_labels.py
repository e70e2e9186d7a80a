from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotate", "0010_project_step_labels_since_run")]

    operations = [
        migrations.AddField(
            model_name="solution",
            name="extra_labels",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
