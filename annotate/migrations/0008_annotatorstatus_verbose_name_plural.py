from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0007_self_service"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="annotatorstatus",
            options={"verbose_name_plural": "annotator statuses"},
        ),
    ]
