#!/usr/bin/env bash
# Build step (reference/PROTOCOL.md): the harness binary in OUT_DIR, built offline in GOPATH mode
# against Debian's Go source tree (clientv3 3.4.23 from golang-etcd-server-dev). Exit 2 naming the
# Debian package when a toolchain or source is missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# OUT_DIR made absolute (GOPATH must be; the others print it).
mkdir -p "$1"
out="$(cd "$1" && pwd)"
if ! command -v go >/dev/null 2>&1; then
    echo "reference client clientv3: go is missing: install the Debian package golang-go" >&2
    exit 2
fi
if [ ! -d /usr/share/gocode/src/go.etcd.io/etcd/clientv3/concurrency ]; then
    echo "reference client clientv3: etcd's Go sources are missing: install the Debian package golang-etcd-server-dev" >&2
    exit 2
fi
if [ -x "$out/clientv3-harness" ] && [ "$out/clientv3-harness" -nt "$here/main.go" ]; then
    exit 0
fi
mkdir -p "$out/gopath/src/locksim-reference"
cp "$here/main.go" "$out/gopath/src/locksim-reference/main.go"
cd "$out/gopath/src/locksim-reference"
export GO111MODULE=off GOPATH="$out/gopath:/usr/share/gocode" GOCACHE="$out/gocache" GOPROXY=off
# A compile error is a failure (1), not a missing toolchain (2).
go build -o "$out/clientv3-harness" . >&2 || exit 1
