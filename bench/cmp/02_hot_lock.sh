# shellcheck shell=bash
# bench/cmp/02_hot_lock.sh: comparison 2, one hot lock.
#
# Queueing and hand-off under full contention: $CLIENTS clients take turns
# on one lock.  Contenders, interleaved (compare_ab): syncwf, mtx/bench/hot
# (bench/syncwf_hot.sql), and one advisory lock, key 42
# (bench/advisory_hot.sql).
# Target: median tps syncwf / advisory at least 1.0.
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

cmp2_run() {
    if want 2; then
        log "comparison 2: one hot lock, $CLIENTS clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
        compare_ab "2-hot" syncwf "$SW_HOT" advisory "$ROOT/bench/advisory_hot.sql"
        R2_SW=$MED_A R2_ADV=$MED_B
        R2=n/a; [[ $R2_SW != n/a ]] && R2=$(ratio "$R2_SW" "$R2_ADV")
        add_summary "2. one hot lock" "median tps syncwf / advisory ($R2_SW / $R2_ADV)" "$R2" ">=" 1.0
    else
        add_summary "2. one hot lock" "median tps syncwf / advisory" "n/a" ">=" 1.0
    fi
}

cmp2_describe() {
    cat <<EOF
2. **One hot lock**: the same $CLIENTS clients all take turns on one mutex
   \`mtx/bench/hot\` against one advisory lock (key 42). Measures queueing and
   hand-off under full contention. Target: syncwf at least 1.0 x advisory.
   Scripts: bench/syncwf_hot.sql, bench/advisory_hot.sql.
EOF
}
