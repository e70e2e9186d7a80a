"""What one timed call needs: labels arriving between calls, the PostgreSQL backend's CPU time, and
the percentile of the timings."""

from __future__ import annotations

import os
from pathlib import Path

NEW_LABELS_PER_CALL = 25
_COPIED = (
    "project_id, solution_id, annotator_id, labeler_uuid, source, timestamp_text, generation, is_quality_control, "
    "is_screening, is_gold, finish_reason, finish_note, total_time_ms, label_steps, n_label_steps, n_positive, "
    "n_neutral, n_negative, n_unrated, n_flagged, n_alternatives, first_error_index"
)


def arrive(project_id: int, n: int) -> None:
    """n new labels submitted now (copies of random existing ones), committed before the next call."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            f"""INSERT INTO annotate_annotation ({_COPIED}, submitted_at, created_at)
                SELECT {_COPIED}, now(), now() FROM annotate_annotation
                WHERE project_id = %s AND NOT is_gold AND id > (random() * 90000)::int LIMIT %s""",
            [project_id, n],
        )


def backend_cpu_s(pid: int) -> float:
    """user + system CPU seconds of a local process (the PostgreSQL backend serving this connection)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]
