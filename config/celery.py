"""The Celery app; tasks live in each app's tasks.py and take primary keys only."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("steplabel")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
