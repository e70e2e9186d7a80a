from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotate", "0006_audit_trail")]

    operations = [
        migrations.AddField(
            model_name="solution",
            name="extra_labels",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
