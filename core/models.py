"""What every area shares: the status of a background job (exports, imports, training runs)."""

from django.db import models


class JobStatus(models.TextChoices):
    CREATED = "created", "Created"
    RUNNING = "running", "Running"
    FAILED = "failed", "Failed"
    SUCCEEDED = "succeeded", "Succeeded"
