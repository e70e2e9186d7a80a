"""`manage.py export_prm800k --project SLUG [--out PATH]`: stream PRM800K JSONL (stdout by default)."""

import os
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from annotate.models import Project
from annotate.services.exports import annotations_for_export, iter_lines


class Command(BaseCommand):
    help = "Export a project's annotations as PRM800K JSONL, streamed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True)
        parser.add_argument("--format", default="prm800k", choices=["prm800k"])
        parser.add_argument("--out", type=Path, help="Output file; standard output when omitted.")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, project: str, out: Path | None, no_progress: bool, **options) -> None:
        project_obj = Project.objects.filter(slug=project).first()
        if project_obj is None:
            raise CommandError(f"No project with slug {project!r}.")
        queryset = annotations_for_export(project=project_obj)
        total = queryset.count() if out else None
        if out is None:
            written = 0
            for line in iter_lines(queryset=queryset):
                sys.stdout.write(line)
                written += 1
            sys.stdout.flush()
            return
        # Write beside the target and rename, so a crash never leaves a half file under its name.
        tmp = out.with_name(out.name + ".partial")
        written = 0
        with (
            open(tmp, "w", encoding="utf-8") as handle,
            tqdm(total=total, unit="rec", desc="exporting", disable=no_progress or not total) as bar,
        ):
            for line in iter_lines(queryset=queryset):
                handle.write(line)
                written += 1
                bar.update(1)
        os.replace(tmp, out)
        self.stderr.write(f"Exported {written} record(s) of {project} to {out}.")
