# shellcheck shell=bash
# bench/cmp/11_rate_limit.sh: comparison 11, rate-limited grants.
#
# $RATE_QUEUED keyed requests queued on a paused semaphore, then room for
# all and a rate of $RATE_PER_S per second: the delay of each grant after
# its token's due time.  syncwf only.
# Target: p99 of the delay at most 2 ms.
# Report: RATE_ROWS, its own section (cmp11_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

RATE_ROWS=()
RATE_QUEUED=3000     # keyed requests queued per round
RATE_PER_S=1000      # rate_limit per 1 s

cmp11_run() {
    if want 11 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 11: rate-limited grants at $RATE_PER_S/s, $BENCH_LAT_ROUNDS rounds of $RATE_QUEUED queued keyed requests"
        q "CREATE TABLE bench_rate_delays (round int, k int, delay_us float8)" >/dev/null
        for ((r = 1; r <= BENCH_LAT_ROUNDS; r++)); do
            # a paused semaphore (limit 0) with every request queued; then, in
            # one commit, room for all and a full bucket of RATE_PER_S tokens:
            # the first RATE_PER_S are granted at once, from t1 (the first
            # grant) on, and the k-th token after them is due at exactly
            # t1 + k / RATE_PER_S s (the bucket is a GCRA: rate_limits.c)
            q "INSERT INTO sync_limit VALUES ('benchr/r$r', 0, NULL, NULL, NULL)" >/dev/null
            q "SELECT count(*) FROM generate_series(1, $RATE_QUEUED) g, sync_request('sem/benchr/r$r', 'rate/$r/' || g)" >/dev/null
            wait_idle
            q "UPDATE sync_limit SET sizelimit = $RATE_QUEUED, rate_limit = $RATE_PER_S, rate_period = '1 s'
                WHERE name = 'benchr/r$r'" >/dev/null
            for ((t = 0; t < 300; t++)); do
                n=$(q "SELECT count(*) FROM sync_state WHERE name = 'sem/benchr/r$r' AND held")
                [[ $n == "$RATE_QUEUED" ]] && break
                sleep 0.1
            done
            [[ $n == "$RATE_QUEUED" ]] || die "comparison 11, round $r: $n of $RATE_QUEUED requests granted after 30 s"
            q "INSERT INTO bench_rate_delays
               SELECT $r, g.k - $RATE_PER_S,
                      extract(epoch FROM g.granted_at - (f.t1 + (g.k - $RATE_PER_S) * interval '1 s' / $RATE_PER_S)) * 1e6
                 FROM (SELECT granted_at, row_number() OVER (ORDER BY token) AS k
                         FROM sync_state WHERE name = 'sem/benchr/r$r') g,
                      (SELECT min(granted_at) AS t1 FROM sync_state WHERE name = 'sem/benchr/r$r') f
                WHERE g.k > $RATE_PER_S" >/dev/null
            read -r n early p50 p99 pmax < <(q "SELECT count(*), count(*) FILTER (WHERE delay_us < 0),
                    round(percentile_disc(0.5) WITHIN GROUP (ORDER BY delay_us)::numeric),
                    round(percentile_disc(0.99) WITHIN GROUP (ORDER BY delay_us)::numeric),
                    round(max(delay_us)::numeric) FROM bench_rate_delays WHERE round = $r" | tr '|' ' ')
            ((early == 0)) || die "comparison 11, round $r: $early grants before their token's due time"
            log "rate round $r: $n grants after the burst: delay p50 ${p50} us, p99 ${p99} us, max ${pmax} us"
            RATE_ROWS+=("| $r | $n | $p50 | $p99 | $pmax |")
            q "SELECT count(sync_release_holder(workflowkey)) FROM sync_state WHERE name = 'sem/benchr/r$r';
               DELETE FROM sync_limit WHERE name = 'benchr/r$r'" >/dev/null
        done
        read -r n p50 p99 pmax < <(q "SELECT count(*),
                round(percentile_disc(0.5) WITHIN GROUP (ORDER BY delay_us)::numeric),
                round(percentile_disc(0.99) WITHIN GROUP (ORDER BY delay_us)::numeric),
                round(max(delay_us)::numeric) FROM bench_rate_delays" | tr '|' ' ')
        RATE_ROWS+=("| **all** | **$n** | **$p50** | **$p99** | **$pmax** |")
        add_summary "11. rate-limited grant delay" "p99 over all $n grants at $RATE_PER_S/s of the delay after the token's due time, microseconds (p50 $p50)" "$p99" "<=" 2000
    else
        add_summary "11. rate-limited grant delay" "p99 of the delay after the token's due time, microseconds" "n/a" "<=" 2000
    fi
}

cmp11_describe() {
    cat <<EOF
11. **Rate-limited grants**: semaphore \`sem/benchr/r<round>\` is paused
   (\`sizelimit\` 0) while $RATE_QUEUED keyed requests are queued on it
   (\`sync_request\`, one statement); then one \`UPDATE sync_limit\` gives
   it room for all of them and a rate of $RATE_PER_S per second
   (\`rate_limit\` $RATE_PER_S, \`rate_period\` 1 s). At that commit the
   bucket is full: the first $RATE_PER_S are granted at once, the first of
   them at t1, and the bucket is then empty. From there on the k-th token
   is due at exactly t1 + k / $RATE_PER_S s (the bucket is a GCRA,
   src/engine/rate_limits.c), and each grant's delay is its
   \`sync_state.granted_at\` (the moment the grant happened in shared
   memory, whoever wrote the row later) minus the due time of its token,
   the grants taken in fencing-token order. The rate worker grants them: it
   sleeps until the next due time (on its latch with a timeout in whole
   milliseconds, the rest of the last millisecond in \`pg_usleep\`), and
   never polls. A grant before its due time fails the run.
   $BENCH_LAT_ROUNDS rounds; target: p99 of the delay at most 2 ms.
EOF
}

cmp11_details() {
    ((${#RATE_ROWS[@]} > 0)) || return 0
    cat <<EOF

### Rate-limited grant delay, comparison 11 (microseconds)

Each grant's delay after its token's due time: rounds in run order, then
all rounds together (bold).

| round | grants | p50 | p99 | max |
| --- | --- | --- | --- | --- |
$(printf '%s\n' "${RATE_ROWS[@]}")
EOF
}
