#!/usr/bin/env bash
# Build step (reference/PROTOCOL.md): node_modules in OUT_DIR from package-lock.json (npm ci).
# Exit 2 naming the package when node/npm are missing or the npm packages cannot be installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# OUT_DIR made absolute (GOPATH must be; the others print it).
mkdir -p "$1"
out="$(cd "$1" && pwd)"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "reference client node-redlock: node and npm are missing: install the Debian packages nodejs and npm" >&2
    exit 2
fi
if [ -d "$out/node_modules/redlock" ] && cmp -s "$out/package-lock.json" "$here/package-lock.json"; then
    exit 0
fi
mkdir -p "$out"
cp "$here/package.json" "$here/package-lock.json" "$out/"
if ! (cd "$out" && npm ci --no-audit --no-fund --ignore-scripts >&2); then
    rm -f "$out/package-lock.json"
    echo "reference client node-redlock: cannot install the npm packages redlock@5.0.0-beta.2 and ioredis@5.9.3 (npm ci failed)" >&2
    exit 2
fi
