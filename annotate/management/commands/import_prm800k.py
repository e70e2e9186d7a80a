"""`manage.py import_prm800k PATH --project SLUG [--task compare]`: validate the whole file, then import it
atomically; a compare project then pairs the solutions of each problem (annotate.services.compare.pairs)."""

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_slug
from django.db import transaction
from django.utils.text import slugify
from tqdm import tqdm

from annotate.models import Comparison, Project, TaskKind
from annotate.services.compare.pairs import DEFAULT_PAIRS_PER_PROBLEM, MAX_PAIRS_PER_PROBLEM
from annotate.services.imports import (
    MAX_REPORTED_ERRORS,
    EmptyFileError,
    ImportValidationError,
    WholeFileError,
    import_file,
)


class Command(BaseCommand):
    help = "Import PRM800K phase-1/phase-2 JSONL or plain JSONL ({problem, ground_truth_answer, steps}) into a project."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--project", type=str.lower, required=True, help="Project slug; created if missing.")
        parser.add_argument("--no-progress", action="store_true", help="Hide the progress bars.")
        parser.add_argument(
            "--task",
            choices=[TaskKind.STEPS, TaskKind.COMPARE],
            help="The project's task kind: steps (default for a new project) or compare (solutions of the same "
            "problem are paired for pairwise preferences). An existing project keeps its kind.",
        )
        parser.add_argument(
            "--pairs-per-problem",
            type=int,
            default=None,
            help="compare: at most this many pairs per problem, informative first. The project keeps it for its "
            f"later imports (the Data page's too); default: the project's, {DEFAULT_PAIRS_PER_PROBLEM} for a new one.",
        )

    def handle(
        self,
        *args,
        path: Path,
        project: str,
        no_progress: bool,
        task: str | None = None,
        pairs_per_problem: int | None = None,
        **options,
    ) -> None:
        try:
            validate_slug(project)
        except ValidationError:
            # Checked before anything is read or written: a bad slug makes pages that cannot be reached.
            raise CommandError(
                f"--project {project!r} is not a valid slug: use only letters, numbers, underscores or hyphens "
                f"(for example {slugify(project) or 'my-project'!r})"
            ) from None
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        if pairs_per_problem is not None and not 1 <= pairs_per_problem <= MAX_PAIRS_PER_PROBLEM:
            raise CommandError(
                f"--pairs-per-problem must be from 1 to {MAX_PAIRS_PER_PROBLEM}, got {pairs_per_problem}"
            )
        size = path.stat().st_size
        show = not no_progress and size > 1_000_000
        project_obj = Project.objects.filter(slug=project).first()
        if project_obj is not None and task is not None and project_obj.task_kind != task:
            raise CommandError(
                f"Project {project} is a {project_obj.task_kind} project; --task {task} cannot change that "
                "(import into a new project instead)."
            )
        # The bars close before an error is printed (else it lands inside a bar's line), and the
        # writing bar opens when writing starts, not beside the validating one.
        bar = _Bars(size=size, show=show)
        try:
            with bar:
                if project_obj is None:
                    # Creating the project belongs to the same all-or-nothing import.
                    with transaction.atomic():
                        project_obj = Project.objects.create(
                            slug=project,
                            name=project,
                            task_kind=task or TaskKind.STEPS,
                            pairs_per_problem=pairs_per_problem or DEFAULT_PAIRS_PER_PROBLEM,
                        )
                        result = import_file(
                            project=project_obj,
                            path=path,
                            validate_progress=bar.validating,
                            write_progress=bar.writing,
                        )
                    self.stdout.write(
                        f"Created project {project}. It has no members yet: add a lead with "
                        f"manage.py add_member --project {project} --user NAME --role lead"
                    )
                else:
                    with transaction.atomic():  # a bound named here is kept only with the import
                        if pairs_per_problem is not None and project_obj.task_kind == TaskKind.COMPARE:
                            project_obj.pairs_per_problem = pairs_per_problem
                            project_obj.save(update_fields=["pairs_per_problem"])
                        result = import_file(
                            project=project_obj,
                            path=path,
                            validate_progress=bar.validating,
                            write_progress=bar.writing,
                        )
        except EmptyFileError:
            raise CommandError(f"{path} is empty: it has no JSON lines to import") from None
        except WholeFileError as exc:  # a whole-file error, not "1 bad line"
            message = exc.errors[0].message
            if "nothing was imported" not in message:  # a damaged gzip's message says it already
                message += "; nothing was imported"
            raise CommandError(f"{path}: {message}") from None
        except ImportValidationError as exc:
            for error in exc.errors:
                self.stderr.write(f"{path}:{error}")
            if exc.bad_lines > MAX_REPORTED_ERRORS:
                self.stderr.write(f"... and {exc.bad_lines - MAX_REPORTED_ERRORS} more bad line(s)")
            raise CommandError(f"{path}: {exc}") from None
        if result.pairs_created is not None:
            total = Comparison.objects.filter(project=project_obj).count()
            self.stdout.write(
                f"Pairs: {result.pairs_created} new, {total} in {project} "
                f"(at most {project_obj.pairs_per_problem} per problem)."
            )
        counts = result.as_dict()
        if not result.created_anything:
            self.stdout.write(
                self.style.WARNING(
                    f"Nothing new: all {result.lines} line(s) of {path} were already in project {project} "
                    f"({result.duplicates} duplicate(s) skipped)."
                )
            )
            return
        summary = ", ".join(f"{key.replace('_', ' ')}: {value}" for key, value in counts.items())
        self.stdout.write(self.style.SUCCESS(f"Imported {path} into {project}: {summary}."))


class _Bars:
    """A "validating" bar, then an "importing" one, each shown only while its pass runs."""

    def __init__(self, *, size: int, show: bool) -> None:
        self.size, self.show = size, show
        self.bar = tqdm(total=size, unit="B", unit_scale=True, desc="validating", disable=not show)
        self.phase = "validating"

    def validating(self, n: int) -> None:
        self.bar.update(n)

    def writing(self, n: int) -> None:
        if self.phase == "validating":
            self.bar.close()
            self.bar = tqdm(total=self.size, unit="B", unit_scale=True, desc="importing", disable=not self.show)
            self.phase = "importing"
        self.bar.update(n)

    def __enter__(self) -> "_Bars":
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.close()
