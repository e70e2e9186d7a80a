"""The audit guard also matches the revision's transaction start, not its transaction id alone.

Transaction ids restart low in a new cluster: after a dump is restored into one, an old revision's
`txid` can equal a new transaction's, which would then license an unaudited change to that label.
`transaction_timestamp()` (microseconds) of the writing transaction tells the two apart. Existing
rows take the migration's own start, which no later transaction shares.
"""

from django.db import migrations

AUDITED = "label_steps, finish_reason, finish_note, total_time_ms, is_gold, is_quality_control, is_screening"


def _function_sql(match: str) -> str:
    """0006's guard function, with `match` as the test that a revision is this transaction's."""
    new = ", ".join("NEW." + c.strip() for c in AUDITED.split(","))
    old = ", ".join("OLD." + c.strip() for c in AUDITED.split(","))
    return f"""
CREATE OR REPLACE FUNCTION annotate_annotation_audit_guard() RETURNS trigger AS $$
BEGIN
  IF ROW({new}) IS DISTINCT FROM ROW({old})
     AND NOT EXISTS (
       SELECT 1 FROM annotate_annotationrevision r
       WHERE r.annotation_id = OLD.id AND {match} AND r.label_steps = OLD.label_steps
     ) THEN
    RAISE EXCEPTION 'annotation % changed without an audit revision (use annotate.services.audit.revise_annotation)',
      OLD.id USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END
$$ LANGUAGE plpgsql;
"""


GUARD_SQL = f"""
ALTER TABLE annotate_annotationrevision
  ADD COLUMN xact_start timestamptz NOT NULL DEFAULT transaction_timestamp();
{_function_sql("r.txid = txid_current() AND r.xact_start = transaction_timestamp()")}
"""

UNGUARD_SQL = f"""
{_function_sql("r.txid = txid_current()")}
ALTER TABLE annotate_annotationrevision DROP COLUMN IF EXISTS xact_start;
"""


def guard(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(GUARD_SQL, params=None)


def unguard(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(UNGUARD_SQL, params=None)


class Migration(migrations.Migration):
    dependencies = [("annotate", "0023_deleted_labels")]

    operations = [migrations.RunPython(guard, unguard)]
