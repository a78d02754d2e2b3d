#!/usr/bin/env bash
# The library table of docs/fidelity.md, from `sim compare FILE --reference LIB` outputs: one
# markdown row per compared row. Usage: scripts/library-table.sh OUT... (each OUT the stdout of
# one `sim compare --reference` run, named after its scenario: DIR/LIB--SCENARIO.txt).
# Per row: the library and version that ran, the preset simulated, the verdicts (the simulated
# share of seeds, then the library's runs, and whether they agree), the outage (unavailable_ms),
# the waits p50/p99 (simulated median [95% range], then each library run) and the messages per
# acquisition (simulated under the preset; the recipe live against its own simulation: the
# harnesses count none).
set -euo pipefail
echo '| library (version) | scenario, row | preset simulated | verdicts: overlap · stale unfenced · token regressions (simulated → library; agree?) | outage ms (sim [95%] → library) | wait p50 ms | wait p99 ms | msgs/acq: sim under the preset; recipe live against the row as written simulated |'
echo '|---|---|---|---|---|---|---|---|'
for out in "$@"; do
    scenario=$(basename "$out" .txt)
    scenario=${scenario#*--}
    awk -v scenario="$scenario" '
    function flush() {
        if (label == "") return
        printf "| %s | `%s`, %s | `%s` | %s | %s | %s | %s | %s |\n", library, scenario, label, preset, verdicts, cell["unavailable_ms"], cell["wait_ms_p50"], cell["wait_ms_p99"], messages
        label = ""
    }
    / live against the model with client = / {
        flush()
        label = $0; sub(/: .*/, "", label)
        library = $0; sub(/^[^:]*: /, "", library); sub(/ live against the model.*/, "", library)
        preset = $0; sub(/.*with client = "/, "", preset); sub(/".*/, "", preset)
        verdicts = ""; messages = "–"; delete cell
        cell["unavailable_ms"] = cell["wait_ms_p50"] = cell["wait_ms_p99"] = "–"
        next
    }
    label != "" && /^  [a-z_0-9]+ / {
        line = $0; sub(/^ +/, "", line)
        n = split(line, c, /   */)
        metric = c[1]
        if (metric == "overlap" || metric == "stale_unfenced" || metric == "token_regressions") {
            v = c[2] " → " c[6] " " (c[7] == "yes" ? "✓" : "**differs**")
            verdicts = verdicts == "" ? v : verdicts " · " v
        } else if (metric == "client_messages_per_acquisition") {
            # The recipe ran the row as written: beside it that row simulated (column 8), if printed.
            messages = c[2] "; recipe live " c[4] (n >= 8 ? " against " c[8] " as written" : "")
        } else if (metric in cell) {
            cell[metric] = c[2] " " c[3] " → " c[6] (c[7] == "yes" ? "" : " (outside)")
        }
        next
    }
    /^$/ { flush() }
    END { flush() }
    ' "$out"
done
