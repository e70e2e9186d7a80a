#!/usr/bin/env bash
# Regenerate frontend/src/api/schema.d.ts from the API's OpenAPI schema (drf-spectacular, then
# openapi-typescript). With --check, change nothing and fail when the committed file is stale.
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-.venv/bin/python}
out=frontend/src/api/schema.d.ts
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The schema depends on the code only; test settings need no running service to produce it.
if ! DJANGO_SETTINGS_MODULE=config.settings.test "$python" manage.py spectacular --file "$tmp/schema.yaml" 2>"$tmp/log"; then
  cat "$tmp/log" >&2
  exit 1
fi
frontend/node_modules/.bin/openapi-typescript "$tmp/schema.yaml" --output "$tmp/schema.d.ts" >/dev/null
if [[ "${1:-}" == "--check" ]]; then
  if ! cmp -s "$tmp/schema.d.ts" "$out"; then
    echo "ERROR: $out is out of date with the API's OpenAPI schema." >&2
    echo "       Run 'make api-types' and commit $out." >&2
    exit 1
  fi
  exit 0
fi
cp "$tmp/schema.d.ts" "$out"
echo "wrote $out"
