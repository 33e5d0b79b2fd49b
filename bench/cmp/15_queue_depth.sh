# shellcheck shell=bash
# bench/cmp/15_queue_depth.sh: comparison 15, keyed requests joining the
# back of a queue 1,000 deep and 1,000,000 deep.
#
# One session queues keyed requests on one held mutex, $DEPTH_BATCH to a
# statement and one statement to a transaction, inside one procedure that
# times each statement (no client round trips in the figures): $DEPTH_SMALL
# requests ($DEPTH_SMALL_ROUNDS times, the queue withdrawn in between), then
# $DEPTH_BIG. Each request returns its position, which costs O(log n) in the
# queue's length (src/engine/queue_rank.c). Then sync_waiters lists the deep
# queue, and TRUNCATE sync_state withdraws it. One contender, syncwf,
# against itself.
# Target: time per request of $DEPTH_BIG at most 2.0 x that of
# $DEPTH_SMALL (the median of its rounds).
# Report: DEPTH_ROWS, its own section (cmp15_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

DEPTH_SMALL=1000
DEPTH_SMALL_ROUNDS=5
DEPTH_BIG=${BENCH_DEPTH:-1000000}
DEPTH_BATCH=1000
DEPTH_LOCK=mtx/bench/depth          # the queue; held by $DEPTH_HOLDER

DEPTH_ROWS=()
# seconds since $1 (a date +%s.%N), to the millisecond
since_ms() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f\n", b - a }'; }
declare -A DEPTH=()

# depth_fill PREFIX N: queue N requests on $DEPTH_LOCK; prints the seconds
# all of them took and those the last batch took, from the procedure's
# clock
depth_fill() {
    q "CALL bench_depth_fill('$DEPTH_LOCK', '$1', $2, $DEPTH_BATCH)" >/dev/null
    q "SELECT round(sum(secs)::numeric, 6),
              round((array_agg(secs ORDER BY batch DESC))[1]::numeric, 6),
              sum(n), max(last_position)
         FROM bench_depth_batches" | tr '|' ' '
}

# depth_empty: withdraw every queued request at once, then hold the lock
# again
depth_empty() {
    q "TRUNCATE sync_state" >/dev/null
    [[ $(q "SELECT status FROM sync_request('$DEPTH_LOCK', 'bench/depth/holder')") == held ]] ||
        die "comparison 15: could not take $DEPTH_LOCK"
}

cmp15_setup() {
    # bench_depth_fill: queue n keyed requests, batch to a statement and a
    # transaction, recording each batch's time and its last position
    q "CREATE UNLOGGED TABLE bench_depth_batches (batch int, n int, secs float8, last_position int);
       CREATE PROCEDURE bench_depth_fill(lock text, prefix text, total int, batch int)
       LANGUAGE plpgsql AS \$\$
       DECLARE
           t0 timestamptz;
           got int;
           pos int;
       BEGIN
           TRUNCATE bench_depth_batches;
           COMMIT;
           FOR b IN 0 .. (total - 1) / batch LOOP
               t0 := clock_timestamp();
               SELECT count(*), max(r.queue_position) INTO got, pos
                 FROM generate_series(b * batch + 1, least((b + 1) * batch, total)) g,
                      LATERAL sync_request(lock, prefix || g) r
                WHERE r.status = 'pending';
               COMMIT;
               INSERT INTO bench_depth_batches
                    VALUES (b, got, extract(epoch FROM clock_timestamp() - t0), pos);
               COMMIT;
           END LOOP;
       END \$\$" >/dev/null
}

cmp15_run() {
    local r secs last n pos t small=()
    if want 15 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 15: keyed requests joining a queue: $DEPTH_SMALL ($DEPTH_SMALL_ROUNDS rounds) and $DEPTH_BIG deep, $DEPTH_BATCH per transaction"
        depth_empty
        for ((r = 1; r <= DEPTH_SMALL_ROUNDS; r++)); do
            read -r secs last n pos < <(depth_fill "bench/depth/s$r/" "$DEPTH_SMALL")
            [[ $n == "$DEPTH_SMALL" && $pos == "$DEPTH_SMALL" ]] ||
                die "comparison 15: $n of $DEPTH_SMALL requests pending, the last at position $pos"
            small+=("$(awk -v s="$secs" -v n="$n" 'BEGIN { printf "%.2f", s * 1e6 / n }')")
            depth_empty
        done
        DEPTH[small]=$(printf '%s\n' "${small[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
        DEPTH[small_rounds]="${small[*]}"
        read -r secs last n pos < <(depth_fill "bench/depth/b/" "$DEPTH_BIG")
        [[ $n == "$DEPTH_BIG" && $pos == "$DEPTH_BIG" ]] ||
            die "comparison 15: $n of $DEPTH_BIG requests pending, the last at position $pos"
        DEPTH[big]=$(awk -v s="$secs" -v n="$n" 'BEGIN { printf "%.2f", s * 1e6 / n }')
        DEPTH[big_last]=$(awk -v s="$last" -v n="$DEPTH_BATCH" 'BEGIN { printf "%.2f", s * 1e6 / n }')
        DEPTH[big_secs]=$secs
        log "comparison 15: ${DEPTH[small]} us per request at depth $DEPTH_SMALL (rounds ${small[*]}), ${DEPTH[big]} at $DEPTH_BIG (${secs}s; last batch ${DEPTH[big_last]} us each)"
        t=$(date +%s.%N)
        n=$(q "SELECT count(*) FROM sync_waiters WHERE lock_name = '$DEPTH_LOCK'")
        DEPTH[waiters_secs]=$(since_ms "$t")
        [[ $n == "$DEPTH_BIG" ]] || die "comparison 15: sync_waiters lists $n of $DEPTH_BIG waiters"
        t=$(date +%s.%N)
        n=$(q "SELECT position FROM sync_waiters WHERE lock_name = '$DEPTH_LOCK' AND holder = 'bench/depth/b/$DEPTH_BIG'")
        DEPTH[position_secs]=$(since_ms "$t")
        [[ $n == "$DEPTH_BIG" ]] || die "comparison 15: the last waiter is at position $n"
        t=$(date +%s.%N)
        depth_empty
        DEPTH[empty_secs]=$(since_ms "$t")
        log "comparison 15: sync_waiters over $DEPTH_BIG waiters ${DEPTH[waiters_secs]}s, withdrawn in ${DEPTH[empty_secs]}s"
        DEPTH_ROWS+=("| $DEPTH_SMALL requests, $DEPTH_SMALL_ROUNDS rounds | ${small[*]} us per request | median ${DEPTH[small]} us |")
        DEPTH_ROWS+=("| $DEPTH_BIG requests | ${DEPTH[big_secs]} s in all; the last $DEPTH_BATCH ${DEPTH[big_last]} us each | ${DEPTH[big]} us per request |")
        DEPTH_ROWS+=("| \`sync_waiters\` over $DEPTH_BIG waiters | \`count(*)\`; one holder's position ${DEPTH[position_secs]} s | ${DEPTH[waiters_secs]} s |")
        DEPTH_ROWS+=("| withdraw them | \`TRUNCATE sync_state\`, then the holder's request again | ${DEPTH[empty_secs]} s |")
        add_summary "15. Deep queue" "time per keyed request joining a queue, $DEPTH_BIG deep / $DEPTH_SMALL deep (${DEPTH[big]} / ${DEPTH[small]} us)" \
            "$(ratio "${DEPTH[big]}" "${DEPTH[small]}")" "<=" 2.0
    else
        add_summary "15. Deep queue" "time per keyed request joining a queue, $DEPTH_BIG deep / $DEPTH_SMALL deep" "n/a" "<=" 2.0
    fi
}

cmp15_describe() {
    cat <<EOF
15. **Deep queue**: keyed requests joining the back of one mutex's queue
   (\`sync_request('$DEPTH_LOCK', 'bench/depth/b/' || g)\`, the lock held
   by another holder), $DEPTH_BATCH requests to a statement and a
   transaction, in one session, timed inside a procedure: $DEPTH_SMALL
   requests ($DEPTH_SMALL_ROUNDS rounds, the median) against $DEPTH_BIG.
   Every request returns its queue position. Then \`sync_waiters\` over
   the deep queue and its withdrawal, for information. Target: time per
   request at $DEPTH_BIG deep at most 2.0 x at $DEPTH_SMALL deep.
   Code: bench/cmp/15_queue_depth.sh.
EOF
}

cmp15_details() {
    ((${#DEPTH_ROWS[@]})) || return 0
    cat <<EOF

### 15. Deep queue

| what | detail | figure |
| --- | --- | --- |
EOF
    printf '%s\n' "${DEPTH_ROWS[@]}"
}
