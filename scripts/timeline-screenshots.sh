#!/bin/sh
# The docs' pictures of the report page's interactive timeline (docs/timeline/): known outcome 15
# (a 15 s clock step on server-2 breaks Redlock) with its overlap clicked open beside the lanes and
# the step in the clock plot, known outcome 13's clocks (offsets up to an hour, drifting up to
# 50%) as slopes, and failover.toml's seed 0 zoomed on the crash. Headless Chromium
# opens each report at `#selftest` (the page hovers, zooms and clicks as tests/report_browser.rs
# has it do) in a copy of the page that hides everything but the timeline section, and takes a
# screenshot. Usage: scripts/timeline-screenshots.sh [SIM] (default target/release/sim).
set -eu
SIM=${1:-target/release/sim}
OUT=docs/timeline
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
shot() { # report dir, picture, window height
    sed 's|</head>|<style>body>*:not(#tl){display:none!important}#tl-selftest{display:none!important}body{max-width:1240px;margin:.5em auto}</style></head>|' \
        "$1/index.html" > "$1/shot.html"
    chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size="1280,$3" \
        --virtual-time-budget=5000 --user-data-dir="$TMP/profile" --screenshot="$2" \
        "file://$(cd "$1" && pwd)/shot.html#selftest" 2>/dev/null
}
"$SIM" run scenarios/known/15-redlock-clock-jump.toml --seeds 2 --report "$TMP/known-15" > /dev/null || true
shot "$TMP/known-15" "$OUT/known-15-overlap-clicked.png" 760
"$SIM" run scenarios/known/13-kubernetes-clock-drift.toml --seeds 1 --report "$TMP/known-13" > /dev/null || true
shot "$TMP/known-13" "$OUT/known-13-clock-drift.png" 640
"$SIM" run scenarios/failover.toml --seeds 2 --report "$TMP/failover" > /dev/null || true
shot "$TMP/failover" "$OUT/failover-zoomed.png" 640
ls -l "$OUT"
