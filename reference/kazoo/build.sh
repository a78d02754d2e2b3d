#!/usr/bin/env bash
# Build step (reference/PROTOCOL.md): a venv with requirements.txt in OUT_DIR.
exec bash "$(dirname "$0")/../common/build-python.sh" "$(cd "$(dirname "$0")" && pwd)" "$1"
