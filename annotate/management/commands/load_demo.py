"""Create the demo project, its users and its solutions (idempotent): `python manage.py load_demo`."""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import transaction

from annotate.models import Project, Role
from annotate.services.members import add_member, labeler_uuid_for
from annotate.services.projects import PROJECT_CREATORS

DEMO_FILE = Path(__file__).resolve().parents[2] / "demo" / "demo_solutions.jsonl"
DEMO_PASSWORD = "steplabel-demo"
DEMO_USERS = [
    ("annotator1", Role.ANNOTATOR),
    ("annotator2", Role.ANNOTATOR),
    ("lead", Role.LEAD),
    ("mlengineer", Role.ML_ENGINEER),
]

GUIDELINES = """\
# Demo: rate each step of a math solution

Read the problem, then rate the solution **one step at a time**, from the top.

| Rating | Use it when the step is |
|---|---|
| **Positive** (+1) | correct and useful: it moves the solution forward |
| **Neutral** (0) | fine but not helpful, or ambiguous: a restatement, a detour, a guess that is not wrong |
| **Negative** (-1) | wrong or misleading: a false statement, a bad calculation, an unjustified leap |

- **Stop at the first negative step.** Later steps are not rated; the solution is finished as
  *found error*.
- Judge the step, not the final answer: a correct-looking step that relies on an earlier mistake
  you already rated is not reached, because you stopped there.
- The ground-truth answer is shown to help you; a solution can reach it by a wrong route.
- Flag a step whose text is broken or not math; use *bad problem* when the problem itself is
  unanswerable, and *give up* when you cannot tell.
"""


class Command(BaseCommand):
    help = "Create the demo project, demo users (password steplabel-demo) and import the demo solutions."

    def handle(self, *args, **options) -> None:
        User = get_user_model()
        with transaction.atomic():
            project, created = Project.objects.get_or_create(
                slug="demo", defaults={"name": "Demo: small math problems", "guidelines": GUIDELINES}
            )
            self.stdout.write(f"Project demo {'created' if created else 'already there'}.")
            for username, role in DEMO_USERS:
                user = self._user(User, username)
                add_member(project=project, user=user, role=role)
                if role == Role.LEAD:  # the demo lead may also create projects from the home page
                    user.groups.add(Group.objects.get_or_create(name=PROJECT_CREATORS)[0])
            admin = User.objects.filter(username="admin").first()
            if admin is None:
                admin = User.objects.create_superuser("admin", "admin@example.com", DEMO_PASSWORD)
                self.stdout.write("Created superuser admin.")
            labeler_uuid_for(user=admin)

        # The import is idempotent itself: a second run creates nothing and says so.
        call_command("import_prm800k", str(DEMO_FILE), project="demo", stdout=self.stdout, stderr=self.stderr)

    def _user(self, User, username: str):
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User.objects.create_user(username, f"{username}@example.com", DEMO_PASSWORD)
            self.stdout.write(f"Created user {username}.")
        return user
