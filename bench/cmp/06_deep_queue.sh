# shellcheck shell=bash
# bench/cmp/06_deep_queue.sh:
# comparison 6, keyed request + release at the front of a 100,000-deep queue.
#
# $CLIENTS clients request and release $DEEP_LOCK (bench/keyed_deep.sql)
# with no other request (E) and with $DEEP two-lock requests queued
# behind, never granted while $DEEP_BLOCK is held (F), rounds in
# $BENCH_DEEP_ORDER.  One contender, syncwf, against itself.
# Target: median tps empty / deep at most 1.3.
# Report: DEEP_ROWS, its own section (cmp6_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

DEEP=100000           # comparison 6: pending keyed requests in the deep queue
DEEP_LOCK=sem/bench/deep          # the queue (limit CLIENTS)
DEEP_BLOCK=mtx/bench/deep-block   # held throughout comparison 6

DEEP_ROWS=()
# deep_counts: "holders waiters" of the deep queue's lock
deep_counts() {
    q "SELECT coalesce(sum(holders), 0), coalesce(sum(waiters), 0)
         FROM sync_locks WHERE lock_name = '$DEEP_LOCK'" | tr '|' ' '
}
# The blocker: holds $DEEP_BLOCK throughout, so that the queued two-lock
# requests can never be granted.
deep_block() {
    [[ $(q "SELECT status FROM sync_request('$DEEP_BLOCK', 'bench/deep/blocker')") == held ]] ||
        die "could not take $DEEP_BLOCK for comparison 6"
}
# Empty the deep queue: TRUNCATE sync_state withdraws every keyed entry at
# commit in one step (withdrawing $DEEP two-lock requests one by one costs a
# sequential scan of sync_state each: sync_state has no index on
# workflowkey), then the blocker takes $DEEP_BLOCK again.
deep_withdraw() {
    q "TRUNCATE sync_state" >/dev/null
    deep_block
}

cmp6_run() {
    if want 6 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 6: keyed request + release at the front of an empty queue (E) and of $DEEP pending requests (F), order: $BENCH_DEEP_ORDER"
        deep_block
        deep=0 fills=0
        # a failed round (a request not granted at the front, a release that
        # found nothing) leaves the lock's holders and first waiters in its log
        PGBENCH_FAIL_QUERY="SELECT 'holder', holder, pid, token, since FROM sync_holders WHERE lock_name = '$DEEP_LOCK'
                            UNION ALL (SELECT 'waiter', holder, pid, position, waiting_since FROM sync_waiters
                                        WHERE lock_name = '$DEEP_LOCK' ORDER BY position LIMIT 10)"
        E=() F=()
        if ((BENCH_WARMUP > 0)); then run_pgbench "6-warmup" "$ROOT/bench/keyed_deep.sql" "$BENCH_WARMUP" >/dev/null; fi
        for step in $BENCH_DEEP_ORDER; do
            case $step in
            E)
                if ((deep)); then
                    t=$(date +%s.%N)
                    deep_withdraw
                    secs=$(since "$t")
                    check_keyed_rows bench/deep/blocker
                    read -r nh nw < <(deep_counts)
                    [[ "$nh $nw" == "0 0" ]] || die "after withdrawing the deep queue: $nh holders, $nw waiters on $DEEP_LOCK"
                    q "VACUUM ANALYZE sync_state" >/dev/null
                    log "withdrew the $DEEP queued requests in ${secs}s"
                    DEEP_ROWS+=("| withdraw $fills | \`TRUNCATE sync_state\`, then the blocker's request again | $secs |")
                    deep=0
                fi
                t=$(run_pgbench "6-empty-$((${#E[@]} + 1))" "$ROOT/bench/keyed_deep.sql" "$BENCH_SECONDS")
                check_keyed_rows bench/deep/blocker
                E+=("$t")
                log "6 round ${#E[@]}: empty queue $t tps"
                ;;
            F)
                if ((!deep)); then
                    fills=$((fills + 1))
                    t=$(date +%s.%N)
                    n=$(q "SELECT count(*) FROM generate_series(1, $DEEP) g,
                                  LATERAL sync_request(ARRAY['$DEEP_LOCK', '$DEEP_BLOCK'], 'bench/deep/q' || g,
                                                       priority => g - $DEEP - 1) r
                            WHERE r.status = 'pending'")
                    secs=$(since "$t")
                    [[ $n == $((2 * DEEP)) ]] ||
                        die "the deep queue: $n pending rows instead of $((2 * DEEP)); holders of both locks: $(q "SELECT string_agg(lock_name || ' ' || coalesce(holder, 'pid ' || pid) || ' token ' || token, ', ') FROM sync_holders WHERE lock_name IN ('$DEEP_LOCK', '$DEEP_BLOCK')"); rows held: $(q "SELECT string_agg(name || ' ' || workflowkey || ' token ' || token, ', ') FROM sync_state WHERE held")"
                    read -r nh nw < <(deep_counts)
                    [[ "$nh $nw" == "0 $DEEP" ]] || die "the deep queue: $nh holders, $nw waiters on $DEEP_LOCK instead of 0, $DEEP"
                    chk=$(q "SELECT count(*) FILTER (WHERE active), min(position), max(position)
                               FROM sync_waiters WHERE lock_name = '$DEEP_LOCK'" | tr '|' ' ')
                    [[ $chk == "$DEEP 1 $DEEP" ]] || die "the deep queue (active, first, last position): $chk"
                    q "VACUUM ANALYZE sync_state" >/dev/null
                    log "queued $DEEP two-lock requests in ${secs}s ($DEEP_LOCK: $nh holders, $nw waiters, all active)"
                    DEEP_ROWS+=("| queue $fills | $DEEP x \`sync_request(ARRAY['$DEEP_LOCK', '$DEEP_BLOCK'], 'bench/deep/q<g>', priority => g - $((DEEP + 1)))\` in one statement; then $DEEP_LOCK has $nh holders and $nw active waiters | $secs |")
                    deep=1
                fi
                t=$(run_pgbench "6-deep-$((${#F[@]} + 1))" "$ROOT/bench/keyed_deep.sql" "$BENCH_SECONDS")
                wait_idle
                read -r nh nw < <(deep_counts)
                [[ "$nh $nw" == "0 $DEEP" ]] || die "after a deep round: $nh holders, $nw waiters on $DEEP_LOCK instead of 0, $DEEP"
                F+=("$t")
                log "6 round ${#F[@]}: $DEEP queued $t tps"
                ;;
            *) die "BENCH_DEEP_ORDER: unknown step '$step' (use E and F)" ;;
            esac
        done
        # shellcheck disable=SC2034  # read by run_pgbench
        PGBENCH_FAIL_QUERY=
        ((deep)) && deep_withdraw
        [[ $(q "SELECT sync_release('$DEEP_BLOCK', 'bench/deep/blocker')") == t ]] ||
            die "could not release $DEEP_BLOCK after comparison 6"
        check_keyed_rows
        q "VACUUM ANALYZE sync_state" >/dev/null
        ((${#E[@]} > 0 && ${#F[@]} > 0)) || die "BENCH_DEEP_ORDER needs at least one E and one F"
        R6_E=$(median "${E[@]}") R6_F=$(median "${F[@]}")
        ROUND_ROWS+=("| 6-deep | syncwf keyed, empty queue | $(IFS='|'; echo "${E[*]}" | sed 's/|/ \/ /g') | $R6_E | $(spread "${E[@]}") |")
        ROUND_ROWS+=("| 6-deep | syncwf keyed, $DEEP queued behind | $(IFS='|'; echo "${F[*]}" | sed 's/|/ \/ /g') | $R6_F | $(spread "${F[@]}") |")
        R6=$(ratio "$R6_E" "$R6_F")
        add_summary "6. 100,000-deep keyed queue" "median tps empty / deep ($R6_E / $R6_F)" "$R6" "<=" 1.3
    else
        add_summary "6. 100,000-deep keyed queue" "median tps empty / deep" "n/a" "<=" 1.3
    fi
}

cmp6_describe() {
    cat <<EOF
6. **Keyed request + release at the front of a 100,000-deep queue**: $CLIENTS
   clients, each pgbench transaction
   \`SELECT 1 / (status = 'held')::integer FROM sync_request('$DEEP_LOCK', holder)\`
   then \`SELECT sync_release('$DEEP_LOCK', holder)\` with a new holder key
   each time, priority 0 (bench/keyed_deep.sql; the semaphore's limit is
   $CLIENTS, one slot per client, and a request that is not granted at once
   is a division by zero that stops the benchmark), with no other request
   for the semaphore (E) and with $DEEP keyed requests queued on it (F).
   The queued requests must stay queued while the measured ones are granted
   at the front, with free slots: each is a two-lock request
   \`sync_request(ARRAY['$DEEP_LOCK', '$DEEP_BLOCK'], 'bench/deep/q<g>', priority => g - $((DEEP + 1)))\`,
   \`g\` in 1..$DEEP, while another keyed holder, \`bench/deep/blocker\`,
   holds \`$DEEP_BLOCK\` in both E and F. A multi-lock request is granted
   only when it fronts all its queues and every lock has a slot, so they are
   never granted, and they are active entries of the queue (an entry of an
   inactive controller would instead be moved out of the queue to a dormant
   list, which would not test the queue). Their priorities (-$DEEP..-1, below
   the measured requests' 0) put every measured request at the front,
   ahead of all $DEEP; each new one goes in at the head of the queue, so the
   setup costs $DEEP queue insertions at the head instead of walks to the
   tail. Before measuring, \`sync_locks\` must show 0 holders and $DEEP
   waiters for \`$DEEP_LOCK\`, and \`sync_waiters\` positions 1..$DEEP, all
   active; after every F round the $DEEP are still queued. The queue is
   emptied with \`TRUNCATE sync_state\` (and the blocker requests again)
   before an E round, and \`sync_state\` is vacuumed after each change. Rounds
   in the order \`$BENCH_DEEP_ORDER\`. Target: median tps empty / deep at most
   1.3.
EOF
}

cmp6_details() {
    ((${#DEEP_ROWS[@]} > 0)) || return 0
    cat <<EOF

### The deep queue (comparison 6)

| step | what | seconds (wall clock, psql) |
| --- | --- | --- |
$(printf '%s\n' "${DEEP_ROWS[@]}")
EOF
}
