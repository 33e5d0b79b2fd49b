# shellcheck shell=bash
# bench/cmp/07_keyed_handoff.sh: comparison 7, keyed hand-off latency.
#
# A release to the pending holder: bench/keyed_handoff.c (built by
# cmp7_setup) times sync_release until the NOTIFY reaches a LISTEN
# connection, or until a blocked sync_wait returns.  Contenders,
# interleaved rounds: syncwf to LISTEN, syncwf to sync_wait, and a
# plain-SQL reference (bench/keyed_setup.sql).
# Targets: to LISTEN, syncwf's p50 and p99 each at most the reference's;
# to sync_wait, the p99 at most 5 ms.  Comparison 9 reads H_P99.
# Report: HO_ROWS, its own section (cmp7_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

HO_WARMUP=20          # unrecorded hand-offs per round of comparison 7

cmp7_setup() {
    if want 7; then
        # comparison 7's client, built with libpq; run as the server user
        HO_BIN=$BENCH_DIR/keyed_handoff
        cc -O2 -Wall -Werror -I"$("$PG_CONFIG" --includedir)" "$ROOT/bench/keyed_handoff.c" \
            -L"$("$PG_CONFIG" --libdir)" -lpq -o "$HO_BIN" >"$LOGS/keyed_handoff-build.log" 2>&1 ||
            die "building bench/keyed_handoff.c failed, see $LOGS/keyed_handoff-build.log"
        chmod 755 "$HO_BIN"
    fi
}

HO_ROWS=()
# the contenders of comparison 7, as the report names them
ho_label() {
    case $1 in
        syncwf) echo "syncwf, LISTEN" ;;
        wait) echo "syncwf, sync_wait" ;;
        sql) echo "plain SQL" ;;
    esac
}
# ho_round MODE ROUND (MODE: syncwf, wait or sql; see bench/keyed_handoff.c)
ho_round() {
    local mode=$1 r=$2 out rc=0 n p50 p99 pmax c50 label
    out=$LOGS/keyed-handoff-$mode-$r
    wait_idle
    as_pg timeout 600 "$HO_BIN" "host=$SOCK port=$PORT user=postgres dbname=$DB" \
        "$mode" "$BENCH_KEYED_HANDOFFS" "$HO_WARMUP" >"$out.txt" 2>"$out.err" || rc=$?
    ((rc == 0)) || die "keyed hand-off $mode round $r failed (exit $rc): $(head -c 300 "$out.err") -- see $out.err"
    read -r n p50 p99 pmax c50 < <(ho_stats "$out.txt")
    [[ $n == "$BENCH_KEYED_HANDOFFS" ]] || die "keyed hand-off $mode round $r: $n hand-offs recorded instead of $BENCH_KEYED_HANDOFFS"
    label=$(ho_label "$mode")
    log "keyed hand-off $mode round $r: $n hand-offs: p50 ${p50} us, p99 ${p99} us, max ${pmax} us (release call p50 ${c50} us)"
    HO_ROWS+=("| $label | $r | $n | $p50 | $p99 | $pmax | $c50 |")
}

cmp7_run() {
    if want 7; then
        log "comparison 7: keyed hand-off latency, $BENCH_LAT_ROUNDS rounds per contender of $BENCH_KEYED_HANDOFFS hand-offs"
        for ((r = 1; r <= BENCH_LAT_ROUNDS; r++)); do
            if [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
                ho_round syncwf "$r"
                check_keyed_rows
                ho_round wait "$r"
                check_keyed_rows
            fi
            ho_round sql "$r"
            [[ $(q "SELECT count(*) FROM bench_ho") == 0 ]] || die "bench_ho rows left after a round"
        done
        H_P99=n/a H_P50=n/a W_P99=n/a W_P50=n/a S_P99=n/a S_P50=n/a
        for mode in syncwf wait sql; do
            [[ $mode != sql && $BENCH_SKIP_SYNCWF == 1 ]] && continue
            read -r n p50 p99 pmax c50 < <(ho_stats "$LOGS"/keyed-handoff-"$mode"-*.txt)
            label=$(ho_label "$mode")
            HO_ROWS+=("| **$label** | **all** | **$n** | **$p50** | **$p99** | **$pmax** | **$c50** |")
            case $mode in
                syncwf) H_P99=$p99 H_P50=$p50 ;;
                wait) W_P99=$p99 W_P50=$p50 ;;
                sql) S_P99=$p99 S_P50=$p50 ;;
            esac
        done
        add_summary "7. keyed hand-off latency" "syncwf p50 over all hand-offs to a LISTEN connection, microseconds, at most the plain-SQL reference's p50" "$H_P50" "<=" "$S_P50"
        add_summary "7. keyed hand-off latency" "syncwf p99 over all hand-offs to a LISTEN connection, microseconds, at most the plain-SQL reference's p99" "$H_P99" "<=" "$S_P99"
        add_summary "7. keyed hand-off latency" "syncwf p99 over all hand-offs to a blocked sync_wait, microseconds (p50 $W_P50)" "$W_P99" "<=" 5000
    else
        add_summary "7. keyed hand-off latency" "syncwf p50 over all hand-offs to a LISTEN connection, microseconds, at most the plain-SQL reference's p50" "n/a" "<=" n/a
        add_summary "7. keyed hand-off latency" "syncwf p99 over all hand-offs to a LISTEN connection, microseconds, at most the plain-SQL reference's p99" "n/a" "<=" n/a
        add_summary "7. keyed hand-off latency" "syncwf p99 over all hand-offs to a blocked sync_wait, microseconds" "n/a" "<=" 5000
    fi
}

cmp7_describe() {
    cat <<EOF
7. **Keyed hand-off latency**: a C client (bench/keyed_handoff.c, libpq) with
   two connections. The mutex \`mtx/bench/handoff\` is held by keyed holder
   \`bench/ho/a\`, and \`bench/ho/b\` has requested it (pending, committed);
   connection L has run \`LISTEN syncwf\`. One hand-off: connection R calls
   \`sync_release('mtx/bench/handoff', 'bench/ho/a')\` (autocommit), and L
   waits for the NOTIFY \`{"event": "granted", ..., "holder": "bench/ho/b", ...}\`;
   then R requests the lock again for \`bench/ho/a\` (pending) and the roles
   swap. Latency: from just before R sends the release until L has read the
   notification, on one monotonic clock; it covers the release, which at its
   pre-commit reserves the pending entry, writes its grant to \`sync_state\`
   and queues the NOTIFY, the release's commit, which hands the slot over
   and sends the NOTIFY, and the delivery to L. Any other notification
   fails the run.
   The same hand-offs again with \`sync_wait\` instead of LISTEN: before
   each one, L sends \`SELECT sync_wait('mtx/bench/handoff', 'bench/ho/b')\`
   and R sends the release only once L's backend sleeps in it
   (\`pg_stat_activity\`: wait event type \`Extension\`); the hand-off ends
   when L has the token. It covers the release and its commit (which writes
   the grant, as above), the wake-up of the waiting backend, and the result
   reaching L.
   $BENCH_LAT_ROUNDS rounds of $BENCH_KEYED_HANDOFFS recorded hand-offs (after $HO_WARMUP unrecorded ones)
   of each, interleaved (LISTEN, \`sync_wait\`, reference) with a plain-SQL
   reference (bench/keyed_setup.sql): the same
   protocol on a table, where the releasing transaction itself deletes its
   row, marks the oldest pending row held and sends the NOTIFY (channel
   \`bench_ho\`): one commit per hand-off, as syncwf's. Targets,
   over all hand-offs: to LISTEN, syncwf's p50 and p99 each at most the
   reference's in the same run; to \`sync_wait\`, the p99 at most 5 ms.
EOF
}

cmp7_details() {
    ((${#HO_ROWS[@]} > 0)) || return 0
    cat <<EOF

### Keyed hand-off latency, comparison 7 (microseconds)

Hand-off: from just before \`sync_release\` is sent until the pending
holder's LISTEN connection has the "granted" notification (LISTEN, plain
SQL), or until its blocked \`sync_wait\` has returned the token
(\`sync_wait\`). Release call: until
the releasing connection has the result of its call (its commit done). Rounds
in run order, then all rounds of a contender together (bold).

| contender | round | hand-offs | p50 | p99 | max | release call p50 |
| --- | --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${HO_ROWS[@]}")
EOF
}
