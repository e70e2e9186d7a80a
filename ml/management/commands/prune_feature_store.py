"""Remove stored step features that no project of this database can read (see
`ml.services.step_features.orphaned_project_stores`)."""

import shutil

from django.core.management.base import BaseCommand

from ml.services import step_features


class Command(BaseCommand):
    help = "Remove the step feature store directories of projects this database does not have."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="List what would go; remove nothing.")

    def handle(self, *args, dry_run: bool, **options) -> None:
        dirs = step_features.orphaned_project_stores()
        size = sum(f.stat().st_size for d in dirs for f in d.rglob("*") if f.is_file())
        for d in dirs:
            self.stdout.write(f"{'would remove' if dry_run else 'removing'} {d}")
            if not dry_run:
                shutil.rmtree(d, ignore_errors=True)
        if not dry_run:
            step_features._stores.clear()
        verb = "would free" if dry_run else "freed"
        self.stdout.write(f"{len(dirs)} orphaned project store(s); {verb} {size / 2**20:.1f} MiB.")
