# Steplabel image: web (gunicorn), Celery workers and beat all run from it (see docker-compose.yml).

# --- frontend: TypeScript bundles built by Vite into frontend/dist (skipped while there is none)
FROM node:20-slim AS frontend
WORKDIR /src
COPY frontend/ frontend/
RUN mkdir -p frontend/dist \
    && if [ -f frontend/package.json ]; then cd frontend && npm ci --no-audit --no-fund && npm run build; fi

# --- application
FROM python:3.11-slim AS app
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production \
    STEPLABEL_VAR_DIR=/data
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app

# torch first, from PyTorch's CPU index (the PyPI wheel is the multi-GB CUDA build); the version
# is the one pinned in requirements.txt, which pip then finds already satisfied.
COPY requirements.txt ./
RUN pip install "$(grep -E '^torch==' requirements.txt)" --index-url https://download.pytorch.org/whl/cpu \
    && pip install -r requirements.txt

COPY . .
COPY --from=frontend /src/frontend/dist/ frontend/dist/
# collectstatic needs settings, not secrets: a throwaway key only for this step. Loading settings
# creates folders under /data (STEPLABEL_VAR_DIR) as root: all of /data goes to the app user.
RUN SECRET_KEY="collectstatic-only-$(python -c 'import secrets; print(secrets.token_hex(32))')" \
    python manage.py collectstatic --noinput \
    && useradd --create-home --uid 1000 steplabel \
    && mkdir -p /data && chown -R steplabel /data
USER steplabel
VOLUME ["/data"]
EXPOSE 8000
CMD ["gunicorn", "-c", "config/gunicorn.py"]
