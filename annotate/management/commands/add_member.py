"""Give a user a role in a project: `add_member --project SLUG --user NAME --role ROLE [--create-user]`."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.models import Project, Role
from annotate.services.members import add_member


class Command(BaseCommand):
    help = "Add a user to a project with a role (annotator, lead, ml_engineer). Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", type=str.lower, required=True, help="Project slug.")
        parser.add_argument("--user", required=True, help="Username.")
        # Checked by hand rather than with argparse `choices` so the error is a CommandError.
        parser.add_argument("--role", required=True, help=f"One of: {', '.join(Role.values)}.")
        parser.add_argument("--create-user", action="store_true", help="Create the user when it does not exist.")
        parser.add_argument("--password", help="Password for a user created here (else unusable: set it later).")
        parser.add_argument("--email", default="", help="E-mail for a user created here.")

    def handle(
        self, *args, project: str, user: str, role: str, create_user: bool, password: str | None, email: str, **options
    ) -> None:
        if role not in Role.values:
            raise CommandError(f"Unknown role {role!r}; use one of: {', '.join(Role.values)}.")
        try:
            project_obj = Project.objects.get(slug=project)
        except Project.DoesNotExist:
            raise CommandError(f"No project with slug {project!r}.") from None

        User = get_user_model()
        user_obj = User.objects.filter(**{User.USERNAME_FIELD: user}).first()
        if user_obj is None:
            if not create_user:
                raise CommandError(f"No user named {user!r}; pass --create-user to create it.")
            user_obj = User.objects.create_user(user, email=email, password=password)
            how = "with the given password" if password else "without a usable password (set one with changepassword)"
            self.stdout.write(f"Created user {user!r} {how}.")

        _, created = add_member(project=project_obj, user=user_obj, role=role)
        if created:
            self.stdout.write(self.style.SUCCESS(f"Added {user} to {project} as {role}."))
        else:
            self.stdout.write(f"{user} is already {role} in {project}; nothing to do.")
