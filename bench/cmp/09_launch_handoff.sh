# shellcheck shell=bash
# bench/cmp/09_launch_handoff.sh:
# comparison 9, launch-plan slot hand-off latency.
#
# A terminal execution update to the next pending execution's "promoted"
# NOTIFY: bench/launch_handoff.c (built by cmp9_setup, with the plan
# bench/dev/lp9) on a plan of max_concurrency 1.  syncwf only: no
# reference contender.
# Target: p99 at most comparison 7's p99 to a LISTEN connection (H_P99).
# Report: LO_ROWS, its own section (cmp9_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

LO_WARMUP=20          # unrecorded hand-offs per round of comparison 9

cmp9_setup() {
    if want 9 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        q "SELECT sync_launch_plan_register('bench', 'dev', 'lp9', 'v1', 1, 'WAIT')" >/dev/null
        # comparison 9's client, built with libpq; run as the server user
        LO_BIN=$BENCH_DIR/launch_handoff
        cc -O2 -Wall -Werror -I"$("$PG_CONFIG" --includedir)" "$ROOT/bench/launch_handoff.c" \
            -L"$("$PG_CONFIG" --libdir)" -lpq -o "$LO_BIN" >"$LOGS/launch_handoff-build.log" 2>&1 ||
            die "building bench/launch_handoff.c failed, see $LOGS/launch_handoff-build.log"
        chmod 755 "$LO_BIN"
    fi
}

LO_ROWS=()
lo_round() {
    local r=$1 out rc=0 n p50 p99 pmax c50 prefix=b9/r$1 live ev
    out=$LOGS/launch-handoff-$r
    wait_idle
    as_pg timeout 600 "$LO_BIN" "host=$SOCK port=$PORT user=postgres dbname=$DB" \
        "$prefix" "$BENCH_LAUNCH_HANDOFFS" "$LO_WARMUP" >"$out.txt" 2>"$out.err" || rc=$?
    ((rc == 0)) || die "launch hand-off round $r failed (exit $rc): $(head -c 300 "$out.err") -- see $out.err"
    read -r n p50 p99 pmax c50 < <(ho_stats "$out.txt")
    [[ $n == "$BENCH_LAUNCH_HANDOFFS" ]] || die "launch hand-off round $r: $n hand-offs recorded instead of $BENCH_LAUNCH_HANDOFFS"
    check_keyed_rows
    live=$(q "SELECT count(*) FROM sync_execution WHERE (project, domain, name) = ('bench', 'dev', 'lp9')
               AND phase NOT IN ($LAUNCH_TERMINAL)")
    [[ $live == 0 ]] || die "launch hand-off round $r: $live executions of bench/dev/lp9 still live"
    ev=$(q "SELECT count(*) FROM sync_launch_event WHERE event = 'PROMOTED' AND execution_id LIKE '$prefix/%'")
    [[ $ev == $((BENCH_LAUNCH_HANDOFFS + LO_WARMUP)) ]] ||
        die "launch hand-off round $r: $ev PROMOTED events instead of $((BENCH_LAUNCH_HANDOFFS + LO_WARMUP))"
    log "launch hand-off round $r: $n hand-offs: p50 ${p50} us, p99 ${p99} us, max ${pmax} us (update call p50 ${c50} us)"
    LO_ROWS+=("| $r | $n | $p50 | $p99 | $pmax | $c50 |")
}

cmp9_run() {
    if want 9 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 9: launch-plan slot hand-off latency, $BENCH_LAT_ROUNDS rounds of $BENCH_LAUNCH_HANDOFFS hand-offs"
        for ((r = 1; r <= BENCH_LAT_ROUNDS; r++)); do
            lo_round "$r"
        done
        read -r n p50 p99 pmax c50 < <(ho_stats "$LOGS"/launch-handoff-*.txt)
        LO_ROWS+=("| **all** | **$n** | **$p50** | **$p99** | **$pmax** | **$c50** |")
        add_summary "9. launch-plan slot hand-off latency" "syncwf p99 over all $n hand-offs, microseconds (p50 $p50), at most comparison 7's LISTEN p99" "$p99" "<=" "${H_P99:-n/a}"
    else
        add_summary "9. launch-plan slot hand-off latency" "syncwf p99 over all hand-offs, microseconds, at most comparison 7's LISTEN p99" "n/a" "<=" n/a
    fi
}

cmp9_describe() {
    cat <<EOF
9. **Launch-plan slot hand-off latency**: a C client
   (bench/launch_handoff.c, libpq) with two connections, on launch plan
   \`bench/dev/lp9\` version \`v1\` (WAIT, max_concurrency 1). One execution
   holds the slot and is RUNNING; connection L has run
   \`LISTEN syncwf_launch\`. One hand-off: connection R creates the next
   execution (PENDING, committed), then calls
   \`sync_execution_update(<the running one>, 'SUCCEEDED')\` (autocommit), and
   L waits for the NOTIFY
   \`{"event": "promoted", "execution_id": <the pending one>, ...}\`.
   Latency: from just before R sends the update until L has read the
   notification, on one monotonic clock; it covers the update, which at its
   pre-commit writes the pending execution's grant to \`sync_state\`, sets
   the execution QUEUED, records the PROMOTED event and queues the NOTIFY,
   its commit, which releases the slot to that execution and sends the
   NOTIFY, and the delivery to L. After each hand-off (untimed) R
   checks that \`sync_execution\` has the promoted execution QUEUED and moves
   it to RUNNING; after each round exactly one PROMOTED event per hand-off
   must be recorded and no execution of the plan may be live; any other
   notification fails the run. $BENCH_LAT_ROUNDS rounds of
   $BENCH_LAUNCH_HANDOFFS recorded hand-offs (after $LO_WARMUP unrecorded
   ones); the verdict is on the p99 over all of them. Target: at most
   comparison 7's p99 to a LISTEN connection in the same run.
   There is no reference contender: Flyte's RFC has a controller poll for
   pending executions, so its hand-off takes up to the polling interval.
EOF
}

cmp9_details() {
    ((${#LO_ROWS[@]} > 0)) || return 0
    cat <<EOF

### Launch-plan slot hand-off latency, comparison 9 (microseconds)

Hand-off: from just before the terminal \`sync_execution_update\` is sent
until the LISTEN connection has the pending execution's "promoted"
notification. Update call: until the updating connection has the result of
its call (its commit done). Rounds in run order, then all rounds together
(bold).

| round | hand-offs | p50 | p99 | max | update call p50 |
| --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${LO_ROWS[@]}")
EOF
}
