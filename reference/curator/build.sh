#!/usr/bin/env bash
# Build step (reference/PROTOCOL.md): Harness.class in OUT_DIR, compiled with javac against
# Debian's Curator 5.4.0 and its dependencies in /usr/share/java (no Maven repository needed).
# Exit 2 naming the Debian package when a toolchain or jar is missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# OUT_DIR made absolute (GOPATH must be; the others print it).
mkdir -p "$1"
out="$(cd "$1" && pwd)"
if ! command -v javac >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
    echo "reference client curator: javac/java are missing: install the Debian package default-jdk-headless (Java 17)" >&2
    exit 2
fi
cp=""
for jar in $(grep -v '^#' "$here/classpath"); do
    if [ ! -f "/usr/share/java/$jar" ]; then
        echo "reference client curator: /usr/share/java/$jar is missing: install the Debian package libcurator-recipes-java (Curator 5.4.0; it brings zookeeper, guava, slf4j and jackson)" >&2
        exit 2
    fi
    cp="$cp:/usr/share/java/$jar"
done
mkdir -p "$out"
echo "${cp#:}" > "$out/classpath.txt"
if [ -f "$out/Harness.class" ] && [ "$out/Harness.class" -nt "$here/Harness.java" ]; then
    exit 0
fi
# A compile error is a failure (1), not a missing toolchain (2).
javac -nowarn -d "$out" -cp "${cp#:}" "$here/Harness.java" >&2 || exit 1
