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

# The README's pictures, from real runs: the failover report (table, charts, timeline, and the
# scorecard at the top of the README, docs/failover/scorecard.png) and a
# sweep of the GC pause length, ShedLock's clock skew against lockAtMostFor, and known outcome
# 08's explained violation. Writes docs/failover/, docs/gc-pause-sweep/,
# docs/shedlock-skew-sweep/ and docs/explain/; then the report page's interactive timeline in
# headless Chromium (docs/timeline/).
docs:
    cargo run --release -- run scenarios/failover.toml --report docs/failover
    cargo run --release -- explain scenarios/known/08-zookeeper-pause-beyond-session.toml --algorithm suspended --seed 0 --out docs/explain
    cargo run --release -- sweep scenarios/gc-pause.toml --param faults.0.duration_ms=0..80000:5000 --seeds 20 --out docs/gc-pause-sweep
    cargo run --release -- sweep scenarios/known/30-db-shedlock-clock-skew.toml --param faults.0.by_ms=0..240000:20000 --param variants.0.lock_at_most_for_ms=30000,60000,120000 --algorithm shedlock-node-time --algorithm shedlock-db-time --seeds 20 --out docs/shedlock-skew-sweep
    scripts/timeline-screenshots.sh target/release/sim

# The profile-guided release build, target/pgo/sim (about 1.1-1.18x as fast, the same results; about
# 7 minutes; needs `rustup component add llvm-tools`).
pgo:
    scripts/build-pgo

# Everything CI checks.
ci:
    bash .ci/run

# sim exhaust's targets (docs/exhaustive.md): each search's result and certificate, in order; the
# bounds come from each file's [exhaust] table, flags override them for the other cases. A
# counterexample exits 1 and is expected for the targets marked so; the files go to target/exhaust/.
exhaust:
    #!/usr/bin/env bash
    set -uo pipefail
    cargo build --release || exit 1
    mkdir -p target/exhaust
    x() { want=$1; shift; ./target/release/sim exhaust "$@"; got=$?; [ $got -eq $want ] || { echo "expected exit $want, got $got"; exit 1; }; }
    x 1 scenarios/exhaust/redis.toml --algorithm redis --out target/exhaust/redis.toml
    x 0 scenarios/exhaust/redis.toml --algorithm redis --fault pause@clients:ttl_ms-200
    x 0 scenarios/exhaust/redis.toml --algorithm redis-fenced --fault pause@clients:ttl_ms+500
    x 1 scenarios/exhaust/redis.toml --algorithm redis-fenced --fault pause@clients:ttl_ms-1,ttl_ms+1 --out target/exhaust/redis-fenced.toml
    x 1 scenarios/exhaust/redlock.toml --algorithm redlock --out target/exhaust/redlock.toml
    x 1 scenarios/exhaust/redis.toml --algorithm redis-fenced --fault pause@clients:ttl_ms+500 --faults 2 --out target/exhaust/redis-fenced-k2.toml
    x 0 scenarios/exhaust/redis.toml --algorithm redis-fenced --fault pause@clients:ttl_ms+500 --faults 2 --distinct-faults
    # etcd-io/etcd#11456: found without the re-check (3.4), a complete certificate with it (3.5).
    x 1 scenarios/exhaust/etcd.toml --algorithm etcd-no-recheck --out target/exhaust/etcd-11456.toml
    x 0 scenarios/exhaust/etcd.toml --algorithm etcd
    # Any waiter paused (also one whose "you hold" answer is in flight): both overlap.
    x 1 scenarios/exhaust/etcd.toml --algorithm etcd --fault pause@waiters:lease_ttl_ms+1000 --out target/exhaust/etcd.toml
    x 0 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --faults 1 --fault crash@leader:1000
    x 0 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --faults 1 --fault pause@clients:session_timeout_ms+2001
    x 1 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --out target/exhaust/zookeeper.toml
    x 1 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --distinct-faults --out target/exhaust/zookeeper-distinct.toml
    x 0 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --faults 2 --distinct-faults --fault crash@leader:1000 --fault isolate@leader:1000
    # etcd, fenced, K = 2 from {leader crash, leader isolated}, each once: complete, no fenced stale
    # write. Its paths run to ~3 000 steps, so one round at the max depth (--start-depth 4096)
    # does the work of iterative deepening's last round only (about a quarter of its states):
    # about 5 minutes with the release build, against 24 for the seven rounds.
    x 0 scenarios/exhaust/etcd.toml --algorithm etcd --clients 2 --property fenced-stale-write --faults 2 --distinct-faults --fault crash@leader:1000 --fault isolate@leader:1000 --start-depth 4096
    # etcd at K = 2 from the issue's menu: a fenced stale write either way (the fencing gap);
    # about 2 and 4 minutes with the release build (2026-11-27, load 3).
    x 1 scenarios/exhaust/etcd.toml --algorithm etcd --clients 2 --property fenced-stale-write --faults 2 --fault pause@clients:lease_ttl_ms+1000 --fault crash@leader:1000 --fault isolate@leader:1000 --out target/exhaust/etcd-k2.toml
    x 1 scenarios/exhaust/etcd.toml --algorithm etcd --clients 2 --property fenced-stale-write --faults 2 --distinct-faults --fault pause@clients:lease_ttl_ms+1000 --fault crash@leader:1000 --fault isolate@leader:1000 --out target/exhaust/etcd-k2-distinct.toml
    # No token regression (--property token-regression, what a fenced resource rests on). Found
    # where the counter is lost (a Redis restart from the stock rdb config) and where a pause past
    # the session or lease catches the answer "you hold" in flight (the issue's menus, ZooKeeper
    # and etcd); certified, complete, for K = 2 from {leader crash, leader isolated}. Release
    # build, 2026-11-27 21:29-21:40 UTC, load 3: ZooKeeper seconds; etcd's certificate about 6
    # minutes (one round), its two counterexamples about 2.5 and 1.2. etcd's K = 2 from those two
    # with repeats completes too (57 436 432 states) in over 10 minutes: not in this recipe.
    x 1 scenarios/exhaust/redis.toml --algorithm redis-fenced --property token-regression --fault crash@servers:500 --out target/exhaust/redis-token.toml
    x 0 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --property token-regression --faults 2 --distinct-faults --fault crash@leader:1000 --fault isolate@leader:1000
    x 0 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --property token-regression --faults 2 --fault crash@leader:1000 --fault isolate@leader:1000
    x 1 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --property token-regression --out target/exhaust/zookeeper-token.toml
    x 1 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --property token-regression --distinct-faults --out target/exhaust/zookeeper-token-distinct.toml
    x 0 scenarios/exhaust/etcd.toml --algorithm etcd --clients 2 --property token-regression --faults 2 --distinct-faults --fault crash@leader:1000 --fault isolate@leader:1000 --start-depth 4096
    x 1 scenarios/exhaust/etcd.toml --algorithm etcd --clients 2 --property token-regression --faults 2 --fault pause@clients:lease_ttl_ms+1000 --fault crash@leader:1000 --fault isolate@leader:1000 --out target/exhaust/etcd-token.toml
    x 1 scenarios/exhaust/etcd.toml --algorithm etcd --clients 2 --property token-regression --faults 2 --distinct-faults --fault pause@clients:lease_ttl_ms+1000 --fault crash@leader:1000 --fault isolate@leader:1000 --out target/exhaust/etcd-token-distinct.toml
    # The same menus with the pause aimed at a holder (its grant learned): certified on both
    # (etcd: one round, 379 s each entry once, 567 s with repeats; release, 2026-11-27 evening).
    x 0 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --property token-regression --faults 2 --distinct-faults --fault pause@holders:session_timeout_ms+2001 --fault crash@leader:1000 --fault isolate@leader:1000
    x 0 scenarios/exhaust/zookeeper.toml --algorithm zookeeper --property token-regression --faults 2 --fault pause@holders:session_timeout_ms+2001 --fault crash@leader:1000 --fault isolate@leader:1000
    x 0 scenarios/exhaust/etcd.toml --algorithm etcd --clients 2 --property token-regression --faults 2 --distinct-faults --fault pause@holders:lease_ttl_ms+1000 --fault crash@leader:1000 --fault isolate@leader:1000 --start-depth 4096 --max-states 80000000
    x 0 scenarios/exhaust/etcd.toml --algorithm etcd --clients 2 --property token-regression --faults 2 --fault pause@holders:lease_ttl_ms+1000 --fault crash@leader:1000 --fault isolate@leader:1000 --start-depth 4096 --max-states 80000000

# Every known-outcome scenario at the full seed counts of docs/models.md (Known outcomes; slow).
known-full:
    for f in scenarios/known/*.toml; do cargo run --release -- run "$f" --seeds 10000 || exit 1; done

# Every fidelity scenario simulated and run live on this machine (needs redis-server,
# mariadb-server, zookeeper, etcd-server, postgresql-15 and pgbouncer: the db-* files run Spring
# JDBC and ShedLock on MariaDB and PostgreSQL, the postgres-* and pg-* files PostgreSQL's advisory
# locks and PgBouncer), side by side: writes docs/fidelity.md (the
# explanations kept in docs/fidelity-notes.md, then the library table of `just
# fidelity-libraries`, then the tables). About 20 minutes plus the library table's 15; keep the
# machine otherwise idle, since the live side's timings are this machine's. `sim compare` exits 1
# when a verdict differs: that is recorded in the tables (and explained in the notes), not a
# failure of the recipe; any other non-zero exit is.
fidelity: fidelity-libraries
    cargo build --release
    { cat docs/fidelity-notes.md; echo; cat target/fidelity/library-table.md; echo; echo "## The tables, from \`just fidelity\` on $(date -u +%Y-%m-%d) (2 live runs against 20 simulated seeds per row)"; for f in scenarios/fidelity/*.toml; do echo; echo "### \`$f\`"; echo; echo '```'; ./target/release/sim compare "$f" --seeds 2 2>/dev/null; [ $? -le 1 ] || exit 1; echo '```'; done; } > docs/fidelity.md.tmp && mv docs/fidelity.md.tmp docs/fidelity.md

# The library table of docs/fidelity.md: each fidelity scenario a real library can run (redis-py,
# node-redlock, Curator, kazoo, clientv3; reference/PROTOCOL.md) compared with `sim compare
# --reference LIB`: the model simulated with the library's preset, the recipe live and the library
# live, 2 live runs each, every run bounded by `timeout`. Writes target/fidelity/library-table.md
# (the table, then each comparison's output) and keeps each run's output and log in
# target/fidelity/LIB--SCENARIO.txt and .err. About 15 minutes.
fidelity-libraries:
    #!/usr/bin/env bash
    set -uo pipefail
    cargo build --release || exit 1
    mkdir -p target/fidelity
    outs=()
    for lib_row in redis-py:redis node-redlock:redlock curator:zookeeper kazoo:zookeeper clientv3:etcd; do
        lib=${lib_row%%:*}; row=${lib_row#*:}
        for f in scenarios/fidelity/$row-*.toml; do
            s=$(basename "$f" .toml)
            # Rows a library cannot run (Redisson's watchdog, Sentinel with replicas) are left out.
            [ "$s" = redis-sentinel-primary-killed ] && continue
            out=target/fidelity/$lib--$s.txt
            echo "fidelity-libraries: $lib $s" >&2
            timeout 600 ./target/release/sim compare "$f" --reference "$lib" --algorithm "$row" --seeds 2 > "$out" 2> "${out%.txt}.err"
            code=$?
            if [ "$code" -gt 1 ]; then echo "$lib $s: sim compare exited $code:" >&2; tail -5 "${out%.txt}.err" >&2; exit 1; fi
            outs+=("$out")
        done
    done
    {
        echo "## The library table, from \`just fidelity-libraries\` on $(date -u +%Y-%m-%d) (2 live runs of the recipe and of the library against 20 simulated seeds under the library's preset)"
        echo
        scripts/library-table.sh "${outs[@]}"
        echo
        echo "### The library comparisons, as \`sim compare --reference\` printed them"
        for out in "${outs[@]}"; do echo; echo "#### \`$(basename "$out" .txt)\`"; echo; echo '```'; cat "$out"; echo '```'; done
    } > target/fidelity/library-table.md

# Mutation testing (cargo-mutants; `cargo install cargo-mutants --locked`) of one area of the
# simulator crate against that crate's tests: checkers, workload, engine (the fault handling:
# the fault schedule, the fault rules of the network, and the engine's fault start/end, crash,
# restart and resume) or parser (the scenario parser's validation). Too slow for CI: run
# it per area. Writes mutants.out/AREA/mutants.out/ (caught.txt, missed.txt, timeout.txt,
# unviable.txt); the figures and the missed mutants are in docs/testing.md.
mutants area="checkers":
    #!/usr/bin/env bash
    set -euo pipefail
    case "{{area}}" in
        checkers) files=(--file 'simulator/src/checker/**') ;;
        workload) files=(--file simulator/src/workload.rs) ;;
        engine) files=(--file simulator/src/engine/schedule.rs --file simulator/src/engine/network.rs --file simulator/src/engine/mod.rs
            --re 'schedule\.rs|network\.rs.*(Cut|Slow|Loss|add_rule|remove_rules|is_cut)|mod\.rs.*(fault_start|fault_end|retry_fault|::crash|::restart|::unpause|set_drift|_reset|on_crash|on_restart)') ;;
        # The checks of the scenario parser; walk.rs (spans and key paths), syntax.rs (the key
        # path of a TOML syntax error) and error.rs (the message) only carry the reports.
        parser) files=(--file 'simulator/src/scenario/**' --exclude walk.rs --exclude syntax.rs --exclude error.rs) ;;
        *) echo "unknown area {{area}}: checkers, workload, engine or parser" >&2; exit 2 ;;
    esac
    # The parser's and the workload's tests are small: building each mutant without optimisation
    # (2-3 s instead of 30 s) is what makes those areas take minutes rather than hours.
    case "{{area}}" in parser|workload) export CARGO_PROFILE_TEST_OPT_LEVEL=0 CARGO_PROFILE_DEV_OPT_LEVEL=0 ;; esac
    # Some mutants loop while growing a string or a list, and take every byte of memory before
    # the timeout: 6 GB of address space per process stops them (the build needs far less).
    ulimit -v 6291456
    mkdir -p "mutants.out/{{area}}"
    cargo mutants --package locksim-simulator "${files[@]}" --jobs 1 --timeout 120 --copy-target true --output "mutants.out/{{area}}"
