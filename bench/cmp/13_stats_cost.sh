# shellcheck shell=bash
# bench/cmp/13_stats_cost.sh: comparison 13, the cost of per-lock statistics.
#
# Workload 1 with syncwf.track_stats on and off, mixed in one pgbench run
# per round (compare_mixed): bench/syncwf_counted.sql,
# bench/syncwf_uncounted.sql.
# Target: counted at most 1.05 x uncounted.
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

cmp13_run() {
    if want 13 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 13: workload 1 with per-lock statistics counted and not, mixed in one pgbench run, $(nproc) clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
        compare_mixed "13-counting" uncounted "$ROOT/bench/syncwf_uncounted.sql" \
            counted "$ROOT/bench/syncwf_counted.sql"
        add_summary "13. counting statistics" "median over rounds of mean latency counted / uncounted in the same pgbench run (${MIX_US[counted]} / ${MIX_US[uncounted]} us), workload 1: sync_lock_stats costs at most 1.05 x" \
            "${COST[counted]}" "<=" 1.05
    else
        add_summary "13. counting statistics" "median over rounds of mean latency counted / uncounted, workload 1" "n/a" "<=" 1.05
    fi
}

cmp13_describe() {
    cat <<EOF
13. **Counting statistics**: workload 1 (random semaphores of limit 1,
   cached) with \`syncwf.track_stats\` on and off, the two contenders mixed
   in one pgbench run as in comparison 10, one client per CPU,
   $BENCH_ROUNDS rounds of ${BENCH_SECONDS} s. Each acquire statement also
   calls \`set_config('syncwf.track_stats', ...)\` (on or off), so that both
   pay for it alike. With the default \`syncwf.stats_max_locks\` (1,000)
   most of the $NAMES names count in the one namespace row
   \`sem/bench/*\`: the atomic additions of every client meet on one row,
   the costly case. Target: counted at most 1.05 x uncounted.
   Scripts: bench/syncwf_counted.sql, bench/syncwf_uncounted.sql.
EOF
}
