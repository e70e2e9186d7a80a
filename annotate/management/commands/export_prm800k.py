"""`manage.py export_prm800k --project SLUG [--format prm800k|trl|math_shepherd|critique|preference] [--out PATH]`
with the export API's options and filters (`--split test`, `--qc exclude`, `--generation 1,2`, ...)."""

import os
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse
from tqdm import tqdm

from annotate.models import Project
from annotate.services.exports import (
    ExportOptionError,
    corrections_in,
    deletions_since,
    iter_lines,
    parse_options,
    plan_export,
)
from annotate.services.exports.options import OPTION_NAMES, TRISTATE
from prm800k.schema import FINISH_REASONS


class Command(BaseCommand):
    help = "Export a project's annotations as PRM800K JSONL, streamed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", type=str.lower, required=True)
        parser.add_argument(
            "--format", default="prm800k", choices=["prm800k", "trl", "math_shepherd", "critique", "preference"]
        )
        parser.add_argument(
            "--ties",
            choices=["exclude", "include"],
            default="exclude",
            help="preference: ties left out unless include.",
        )
        parser.add_argument(
            "--labels",
            choices=["human", "auto"],
            default="human",
            help="math_shepherd/trl: human labels, or automatic ones (math_shepherd: imported lines byte for byte).",
        )
        parser.add_argument("--since", help="Cursor printed by an earlier export: only what is new since.")
        parser.add_argument("--neutral", choices=["positive", "negative", "drop"], default="positive")
        parser.add_argument("--alternatives", choices=["branch", "drop"], default="branch")
        # The export API's filters, under the same names and with its rules (annotate.services.exports).
        parser.add_argument("--generation", help="Rounds, comma-separated (-1 = screening questions).")
        parser.add_argument("--split", choices=["train", "test"], help="test: MATH-500 problems; train: the rest.")
        parser.add_argument("--qc", choices=TRISTATE, default="include", help="Gold / QC questions.")
        parser.add_argument("--screening", choices=TRISTATE, default="include", help="Screening questions.")
        parser.add_argument("--labeler", help="One labeler's pseudonymous UUID (as exports carry it).")
        parser.add_argument(
            "--finish-reason", dest="finish_reason", help=f"Comma-separated, among {', '.join(FINISH_REASONS)}."
        )
        parser.add_argument(
            "--min-agreement", dest="min_agreement", help="Only solutions whose labels agree at least this much (0-1)."
        )
        parser.add_argument(
            "--include-history", dest="include_history", action="store_true", help="prm800k: corrections as history."
        )
        parser.add_argument("--out", type=Path, help="Output file; standard output when omitted.")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, project: str, out: Path | None, no_progress: bool, **options) -> None:
        project_obj = Project.objects.filter(slug=project).first()
        if project_obj is None:
            raise CommandError(f"No project with slug {project!r}.")
        params = {key: options[key] for key in OPTION_NAMES if options.get(key) not in (None, False)}
        try:
            plan = plan_export(project=project_obj, options=parse_options(project=project_obj, params=params))
        except ExportOptionError as exc:
            raise CommandError(str(exc)) from None
        if out is not None and not out.parent.is_dir():  # before the export is read, not after
            raise CommandError(f"--out {out}: no directory {out.parent}")
        to_replace_or_drop = self._to_replace_or_drop(project_obj, plan, params.get("since"))
        # A bar over records: automatic labels are not the plan's annotations, and a TRL line is a
        # branch of one (several per record), so those exports count lines without a total.
        counted = out and plan.options.labels != "auto" and plan.options.format != "trl"
        total = plan.queryset.count() if counted else None
        if out is None:
            try:
                for line in iter_lines(plan=plan):
                    sys.stdout.write(line)
                sys.stdout.flush()
            except BrokenPipeError:
                # `export_prm800k ... | head`: the reader has what it wanted; no traceback (and no
                # second one when Python flushes stdout at exit: see the signal module's notes)
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return
            if plan.cursor:
                self.stderr.write(f"Next cursor (--since): {plan.cursor}")
            if to_replace_or_drop:
                self.stderr.write(to_replace_or_drop)
            return
        # Write beside the target and rename, so a crash never leaves a half file under its name.
        tmp = out.with_name(out.name + ".partial")
        written = 0
        try:
            with (
                open(tmp, "w", encoding="utf-8") as handle,
                tqdm(total=total, unit="line", desc="exporting", disable=no_progress) as bar,
            ):
                for line in iter_lines(plan=plan):
                    handle.write(line)
                    written += 1
                    bar.update(1)
            os.replace(tmp, out)
        except OSError as exc:  # a read-only directory, a full disk: say so, leave no .partial file
            tmp.unlink(missing_ok=True)
            raise CommandError(f"--out {out}: {exc.strerror or exc}") from None
        following = f" Next cursor (--since): {plan.cursor}" if plan.cursor else ""
        self.stderr.write(f"Exported {written} line(s) of {project} to {out}.{following}")
        if to_replace_or_drop:
            self.stderr.write(to_replace_or_drop)

    @staticmethod
    def _to_replace_or_drop(project: Project, plan, since: str | None) -> str:
        """With --since, the stream's X-Export-Corrected and X-Export-Deleted in words: how many records of
        this export correct a version delivered up to that cursor, how many labels were deleted since it
        (counted after the plan numbered the labels, as the stream counts them) and where their keys
        are listed, so a shell pipeline knows it has records to replace or drop. "" without --since or none."""
        if not since:
            return ""
        said = []
        corrected = corrections_in(plan=plan)  # the stream's X-Export-Corrected
        if corrected:
            said.append(
                f"{corrected} corrected label{'s' if corrected != 1 else ''} in this export: an export up to that "
                "cursor may hold an older version; replace PRM800K records by (labeler, timestamp), or rebuild from "
                "a full export for a format without a key."
            )
        preferences = plan.options.format == "preference"
        count = deletions_since(project=project, since=plan.options.since, preferences=preferences).count()
        if count:
            path = reverse("project-export-deletions", args=[project.slug])
            query = f"?since={since}" + ("&format=preference" if preferences else "")
            said.append(
                f"{count} label{'s' if count != 1 else ''} deleted since that cursor: drop their records, or rebuild "
                f"from a full export for a format without a key (their keys: GET {path}{query})."
            )
        return "\n".join(said)
