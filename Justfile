# Recipes for people; CI calls .ci/run and does not need just.

# Run the failover comparison.
run file="scenarios/failover.toml":
    cargo run --release -- run {{file}}

# The test suite (the same command CI runs).
test:
    cargo test --workspace

# Engine, scenario and memory benchmarks, then the criterion benchmarks.
bench:
    cargo run --release -- bench engine
    cargo run --release -- bench scenario scenarios/failover.toml
    cargo run --release -- bench memory scenarios/failover.toml
    cargo bench --workspace

# The README's pictures, from real runs: the failover report (table, charts, timeline) and a
# sweep of the GC pause length, and known outcome 08's explained violation. Writes
# docs/failover/, docs/gc-pause-sweep/ and docs/explain/.
docs:
    cargo run --release -- run scenarios/failover.toml --report docs/failover
    cargo run --release -- explain scenarios/known/08-zookeeper-pause-beyond-session.toml --algorithm suspended --seed 0 --out docs/explain
    cargo run --release -- sweep scenarios/gc-pause.toml --param faults.0.duration_ms=0..80000:5000 --seeds 20 --out docs/gc-pause-sweep

# Everything CI checks.
ci:
    bash .ci/run

# Every known-outcome scenario at the full seed counts of docs/models.md (Known outcomes; slow).
known-full:
    for f in scenarios/known/*.toml; do cargo run --release -- run "$f" --seeds 10000 || exit 1; done

# Every fidelity scenario simulated and run live on this machine (needs redis-server,
# mariadb-server, zookeeper and etcd-server), side by side: writes docs/fidelity.md (the
# explanations kept in docs/fidelity-notes.md, then the tables). About 12 minutes; keep the
# machine otherwise idle, since the live side's timings are this machine's.
fidelity:
    cargo build --release
    { cat docs/fidelity-notes.md; echo; echo "## The tables, from \`just fidelity\` on $(date -u +%Y-%m-%d) (2 live runs against 20 simulated seeds per row)"; for f in scenarios/fidelity/*.toml; do echo; echo "### \`$f\`"; echo; echo '```'; ./target/release/sim compare "$f" --seeds 2 2>/dev/null || exit 1; echo '```'; done; } > docs/fidelity.md.tmp && mv docs/fidelity.md.tmp docs/fidelity.md
