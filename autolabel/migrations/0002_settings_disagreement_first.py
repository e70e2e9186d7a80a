import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0001_initial"),
        ("autolabel", "0001_initial"),
    ]

    operations = [
        migrations.RenameModel(old_name="AutolabelBudget", new_name="AutolabelSettings"),
        migrations.AlterModelOptions(name="autolabelsettings", options={"verbose_name_plural": "autolabel settings"}),
        migrations.AlterField(
            model_name="autolabelsettings",
            name="project",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE, related_name="autolabel_settings", to="annotate.project"
            ),
        ),
        migrations.AddField(
            model_name="autolabelsettings",
            name="disagreement_first",
            field=models.BooleanField(
                default=False,
                help_text="Queue: after each retrain, serve first the solutions whose automatic labels the PRM "
                "disagrees with most (then the project's selection strategy orders the rest).",
            ),
        ),
    ]
