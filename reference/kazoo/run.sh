#!/usr/bin/env bash
# One client (reference/PROTOCOL.md): run.sh OUT_DIR SPEC_FILE; exec keeps sim live's pid.
PYTHONDONTWRITEBYTECODE=1 exec "$1/venv/bin/python" -u "$(dirname "$0")/harness.py" "$2"
