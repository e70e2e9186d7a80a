"""Solution.model_version (a foreign key into ml) becomes model_run_id, a plain run id.

The labeling domain no longer depends on the model registry's table; values are kept: the
foreign key's column becomes an integer column, then it takes the new name.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotate", "0008_annotatorstatus_verbose_name_plural")]

    operations = [
        migrations.AlterField(
            model_name="solution",
            name="model_version",
            field=models.BigIntegerField(null=True, blank=True, db_column="model_version_id"),
        ),
        migrations.RenameField(model_name="solution", old_name="model_version", new_name="model_run_id"),
        migrations.AlterField(
            model_name="solution",
            name="model_run_id",
            field=models.BigIntegerField(null=True, blank=True),
        ),
    ]
