"""Import and export jobs (core.jobs pattern): rows a worker claims and runs."""

from django.conf import settings
from django.db import models

from annotate.models.projects import Project
from core.models import JobStatus


class ImportJob(models.Model):
    """An uploaded file waiting for, or imported by, a worker (annotate.services.imports.jobs)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="imports")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    filename = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.CREATED)
    # The stored upload, deleted when the job ends; its size in bytes (progress is read from the cache).
    file_path = models.CharField(max_length=500, blank=True)
    file_size = models.BigIntegerField(default=0)
    counters = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Times the sweep put it back after its worker was lost (core.jobs.requeue_stale caps them).
    restarts = models.PositiveSmallIntegerField(default=0)

    def __str__(self) -> str:
        return f"import {self.pk} ({self.status})"


class Export(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="exports")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.CREATED)
    format = models.CharField(max_length=16, default="prm800k")
    filters = models.JSONField(default=dict, blank=True)
    file_path = models.CharField(max_length=500, blank=True)
    record_count = models.PositiveIntegerField(default=0)
    byte_size = models.BigIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    restarts = models.PositiveSmallIntegerField(default=0)  # as ImportJob.restarts

    def __str__(self) -> str:
        return f"export {self.pk} ({self.status})"
