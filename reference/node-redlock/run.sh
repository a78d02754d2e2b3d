#!/usr/bin/env bash
# One client (reference/PROTOCOL.md): run.sh OUT_DIR SPEC_FILE; exec keeps sim live's pid.
# The harness stays in the repository; its modules come from OUT_DIR.
exec env NODE_PATH="$1/node_modules" node "$(dirname "$0")/harness.js" "$2"
