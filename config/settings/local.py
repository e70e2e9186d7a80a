"""`make run` and development: DEBUG on and a development SECRET_KEY unless the environment says
otherwise; everything else as in base (the embedded SQLite + filesystem broker by default)."""

import os

from .base import *  # noqa: F403
from .base import env_bool

SECRET_KEY = os.environ.get("SECRET_KEY") or "dev-insecure-steplabel-key-change-me"
DEBUG = env_bool("DEBUG", True)
