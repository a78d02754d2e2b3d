#!/usr/bin/env bash
# One client (reference/PROTOCOL.md): run.sh OUT_DIR SPEC_FILE; exec keeps sim live's pid.
exec java -XX:+UseSerialGC -Xss512k -Xmx256m -cp "$1:$(cat "$1/classpath.txt")" Harness "$2"
