from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotate", "0009_solution_model_run_id")]

    operations = [
        migrations.AddField(
            model_name="solution",
            name="extra_labels",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
