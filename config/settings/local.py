"""`make run` and development: DEBUG on and a development SECRET_KEY unless the environment says
otherwise; everything else as in base (the embedded SQLite + filesystem broker by default)."""

import os

from .base import *  # noqa: F403
from .base import env_bool, env_list

SECRET_KEY = os.environ.get("SECRET_KEY") or "dev-insecure-steplabel-key-change-me"
DEBUG = env_bool("DEBUG", True)
# A model server on this machine (vllm serve ... --port 8001) is what development calls.
AUTOLABEL_ALLOWED_HOSTS = env_list("AUTOLABEL_ALLOWED_HOSTS", "localhost,127.0.0.1,::1")
