# shellcheck shell=bash
# bench/cmp/01_random_names.sh: comparison 1, random names.
#
# The uncontended acquire/release path: $CLIENTS clients acquire and
# release a random lock of $NAMES.  Contenders, interleaved (compare_ab):
# syncwf, sem/bench/<n> of limit 1 (bench/syncwf_random.sql), and
# pg_advisory_lock(n) (bench/advisory_random.sql).
# Target: median tps syncwf / advisory at least 0.95.
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

cmp1_run() {
    if want 1; then
        log "comparison 1: random names, $CLIENTS clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
        compare_ab "1-random" syncwf "$SW_RANDOM" advisory "$ROOT/bench/advisory_random.sql"
        R1_SW=$MED_A R1_ADV=$MED_B
        R1=n/a; [[ $R1_SW != n/a ]] && R1=$(ratio "$R1_SW" "$R1_ADV")
        add_summary "1. random names" "median tps syncwf / advisory ($R1_SW / $R1_ADV)" "$R1" ">=" 0.95
    else
        add_summary "1. random names" "median tps syncwf / advisory" "n/a" ">=" 0.95
    fi
}

cmp1_describe() {
    cat <<EOF
1. **Random names**: $CLIENTS clients acquire and release a random lock of
   $NAMES: \`sync_acquire('sem/bench/' || n)\` / \`sync_release(...)\`
   with \`n\` uniform in 1..$NAMES, each semaphore having a \`sync_limit\` row
   of limit 1 so it behaves like a mutex, against
   \`pg_advisory_lock(n)\` / \`pg_advisory_unlock(n)\`. Measures the
   uncontended acquire/release path. Target: syncwf at least 0.95 x advisory.
   Scripts: bench/syncwf_random.sql, bench/advisory_random.sql.
EOF
}
