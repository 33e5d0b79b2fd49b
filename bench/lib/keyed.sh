# shellcheck shell=bash
# bench/lib/keyed.sh:
# helpers of the keyed-hold and launch-plan comparisons (5 to 9),
# for scripts/bench.sh (sourced by it, never run).

# The worker hands freed slots to pending keyed requests and sends their
# NOTIFYs; it connects to syncwf.database (bench), retrying every 5 s until
# that database exists.
wait_worker() {
    local i
    for ((i = 0; i < 300; i++)); do
        [[ $(q "SELECT count(*) FROM pg_stat_activity
                 WHERE backend_type = 'syncwf worker' AND datname = current_database()") == 1 ]] && return 0
        sleep 0.1
    done
    die "the syncwf worker is not connected to database $DB after 30 s, see $BENCH_DIR/server.log"
}

# No keyed rows may survive a run but the named holder's.
check_keyed_rows() {
    local keep=${1:-} n
    wait_idle
    n=$(q "SELECT count(*) FROM sync_state WHERE workflowkey IS DISTINCT FROM nullif('$keep', '')")
    [[ $n == 0 ]] || die "$n sync_state rows left after a run: $(q "SELECT string_agg(name || ' ' || workflowkey, ', ') FROM (SELECT * FROM sync_state LIMIT 5) s")"
}

# ho_stats FILE...: "hand-offs p50 p99 max call_p50" (percentile_disc, microseconds)
ho_stats() {
    # shellcheck disable=SC2016  # awk code
    local pcts='function pct(p,   i) { i = int(p * NR); if (i < p * NR) i++; if (i < 1) i = 1; return v[i] }
                { v[NR] = $1 }'
    printf '%s %s\n' \
        "$(awk '{print $1}' "$@" | sort -n | awk "$pcts"' END { print NR, pct(0.5), pct(0.99), v[NR] }')" \
        "$(awk '{print $2}' "$@" | sort -n | awk "$pcts"' END { print pct(0.5) }')"
}

# the terminal phases of a launch-plan execution (comparisons 8 and 9)
# shellcheck disable=SC2034  # used by comparisons 8 and 9
LAUNCH_TERMINAL="'SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT'"
