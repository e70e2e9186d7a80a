"""First-wrong-step marks of compare projects counted in their solutions' annotation_count (before
this, marks made labels that the count, and so the dashboard's "solutions labeled", left out)."""

from django.db import migrations
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce


def count_marks(apps, schema_editor):
    Solution = apps.get_model("annotate", "Solution")
    Annotation = apps.get_model("annotate", "Annotation")
    labels = (
        Annotation.objects.filter(solution=OuterRef("pk"))
        .order_by()
        .values("solution")
        .annotate(n=Count("pk"))
        .values("n")[:1]
    )
    Solution.objects.filter(project__task_kind="compare").update(annotation_count=Coalesce(Subquery(labels), 0))


class Migration(migrations.Migration):
    dependencies = [("annotate", "0018_preference_export_seq")]

    operations = [migrations.RunPython(count_marks, migrations.RunPython.noop)]
