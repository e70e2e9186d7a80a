"""Remove stored step features nothing can read: the stores of projects this database does not
have (`ml.services.step_features.orphaned_project_stores`) and whole featurizer-spec directories
no default, active model or pending run uses (`stale_spec_dirs`). Features are a cache, so a
later reader recomputes anything removed here."""

import shutil

from django.core.management.base import BaseCommand

from ml.services import step_features


class Command(BaseCommand):
    help = (
        "Remove the step feature stores of projects this database does not have, and those of featurizer specs "
        "nothing uses any more (an old featurizer version or default)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="List what would go; remove nothing.")

    def handle(self, *args, dry_run: bool, **options) -> None:
        stale = step_features.stale_spec_dirs()
        # a project store inside a stale spec directory goes with it: counted once
        orphans = [d for d in step_features.orphaned_project_stores() if d.parent not in stale]
        total = 0.0
        for kind, dirs in (("orphaned project store", orphans), ("unused featurizer spec", stale)):
            size = sum(f.stat().st_size for d in dirs for f in d.rglob("*") if f.is_file()) / 2**20
            total += size
            for d in dirs:
                self.stdout.write(f"{'would remove' if dry_run else 'removing'} {kind} {d}")
                if not dry_run:
                    shutil.rmtree(d, ignore_errors=True)
            self.stdout.write(f"{len(dirs)} {kind}(s), {size:.1f} MiB.")
        if not dry_run:
            step_features._stores.clear()
        self.stdout.write(f"{'Would free' if dry_run else 'Freed'} {total:.1f} MiB.")
