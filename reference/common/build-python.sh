#!/usr/bin/env bash
# Builds a Python harness: a venv in OUT_DIR with the harness's pinned requirements.txt.
# Usage: build-python.sh HARNESS_DIR OUT_DIR. Exit 2 naming the package when a toolchain is
# missing; returns at once when OUT_DIR already holds these exact requirements.
set -euo pipefail
harness="$1"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
py="${PYTHON:-python3}"
if ! command -v "$py" >/dev/null 2>&1; then
    echo "reference client $(basename "$harness"): python3 is missing: install the Debian package python3 (apt-get install python3 python3-venv)" >&2
    exit 2
fi
if [ -f "$out/requirements.txt" ] && cmp -s "$out/requirements.txt" "$harness/requirements.txt" && [ -x "$out/venv/bin/python" ]; then
    exit 0
fi
rm -rf "$out/venv" "$out/requirements.txt"
mkdir -p "$out"
if ! "$py" -m venv "$out/venv" >/dev/null 2>&1; then
    echo "reference client $(basename "$harness"): python3 cannot make a venv: install the Debian package python3-venv" >&2
    exit 2
fi
if ! "$out/venv/bin/python" -m pip install -q --disable-pip-version-check -r "$harness/requirements.txt" >&2; then
    pkgs=$(grep -v '^#' "$harness/requirements.txt" | tr '\n' ' ')
    echo "reference client $(basename "$harness"): cannot install the PyPI package(s) $pkgs(pip install from PyPI failed)" >&2
    exit 2
fi
cp "$harness/requirements.txt" "$out/requirements.txt"
