"""The web workers never load torch (issue 14): serving claims, submits, the dashboard and the API
imports every view, and only the `ml` worker's training and scoring need the model library
(`ml.services.prm_lib` loads it on first use)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
import django
django.setup()
from django.urls import get_resolver
import config.wsgi
def walk(patterns):
    for p in patterns:
        walk(getattr(p, "url_patterns", []))
        getattr(p, "callback", None)
walk(get_resolver().url_patterns)
from ml import services  # what views call for retrains and rescoring
loaded = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
print("TORCH" if loaded else "NO-TORCH", len(sys.modules))
"""


def test_the_web_process_imports_every_view_without_torch():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith("NO-TORCH"), out.stdout + out.stderr
    assert int(line.split()[1]) > 500  # the probe really loaded the app (Django, DRF, every view)
