# Recipes for people; CI calls .ci/run and does not need just.

# Run the failover comparison.
run file="scenarios/failover.toml":
    cargo run --release -- run {{file}}

# The test suite (the same command CI runs).
test:
    cargo test --workspace

# Engine and model benchmarks.
bench:
    cargo run --release -- bench engine
    cargo run --release -- bench scenario scenarios/failover.toml
    cargo bench

# Everything CI checks.
ci:
    bash .ci/run

# Every known-outcome scenario at the full seed counts of known-outcomes.md (slow).
known-full:
    for f in scenarios/known/*.toml; do cargo run --release -- run "$f" --seeds 10000 || exit 1; done
