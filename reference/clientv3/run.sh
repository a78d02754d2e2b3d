#!/usr/bin/env bash
# One client (reference/PROTOCOL.md): run.sh OUT_DIR SPEC_FILE; exec keeps sim live's pid.
exec "$1/clientv3-harness" "$2"
