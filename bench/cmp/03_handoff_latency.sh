# shellcheck shell=bash
# bench/cmp/03_handoff_latency.sh:
# comparison 3, release -> waiter-running latency.
#
# Two sessions ping-pong one lock (bench/pingpong.sql, loaded with the
# database); every release is a hand-off to a sleeping waiter.
# Contenders, interleaved rounds: syncwf (mtx/bench/pingpong) and an
# advisory lock (key 4242).
# Target: syncwf p99 over all hand-offs at most advisory's p99.
# Report: LAT_ROWS, its own section (cmp3_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

LAT_ROWS=()
# lat_stats RUN_PATTERN: "hand-offs acquires p50 p99 max" over the runs LIKE the pattern
lat_stats() {
    q "SELECT (SELECT count(*) FROM bench_stamps WHERE run LIKE '$1'),
              count(*),
              round(percentile_disc(0.5) WITHIN GROUP (ORDER BY h.latency_us)::numeric),
              round(percentile_disc(0.99) WITHIN GROUP (ORDER BY h.latency_us)::numeric),
              round(max(h.latency_us)::numeric)
         FROM (SELECT DISTINCT run FROM bench_stamps WHERE run LIKE '$1') r
              CROSS JOIN LATERAL bench_handoffs(r.run) h" | tr '|' ' '
}
# pingpong KIND LOCKNAME KEY ROUND: two concurrent sessions, one round
pingpong() {
    local kind=$1 lockname=$2 key=$3 run=$1-$4 pa pb rca=0 rcb=0 i held
    local call="SELECT bench_pingpong('$run', '%s', '$kind', '$lockname', $key, $BENCH_HANDOFFS, %s)"
    local events handoffs p50 p99 pmax
    wait_idle
    q "DELETE FROM bench_stamps WHERE run = '$run'" >/dev/null
    # A starts first and holds its first acquire until B waits for the lock.
    # shellcheck disable=SC2059
    as_pg PGAPPNAME=bench_pp_A timeout 300 "${PSQL[@]}" -d "$DB" -c "$(printf "$call" A true)" \
        >"$LOGS/pingpong-$run-A.log" 2>&1 &
    pa=$!
    BG_PIDS+=("$pa")
    held=0
    for ((i = 0; i < 600; i++)); do
        if [[ $kind == syncwf ]]; then
            held=$(q "SELECT count(*) FROM sync_holders WHERE lock_name = '$lockname'")
        else
            held=$(q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
                       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                       AND ((classid::bigint << 32) | objid::bigint) = $key")
        fi
        [[ $held == 1 ]] && break
        kill -0 "$pa" 2>/dev/null || break
        sleep 0.05
    done
    [[ $held == 1 ]] || die "ping-pong $run: session A never held the lock, see $LOGS/pingpong-$run-A.log"
    # shellcheck disable=SC2059
    as_pg PGAPPNAME=bench_pp_B timeout 300 "${PSQL[@]}" -d "$DB" -c "$(printf "$call" B false)" \
        >"$LOGS/pingpong-$run-B.log" 2>&1 &
    pb=$!
    BG_PIDS+=("$pb")
    wait "$pa" || rca=$?
    wait "$pb" || rcb=$?
    BG_PIDS=()
    ((rca == 124 || rcb == 124)) && die "ping-pong $run did not finish within 300 s (hang?), see $LOGS/pingpong-$run-*.log"
    ((rca == 0 && rcb == 0)) || die "ping-pong $run failed (A exit $rca, B exit $rcb), see $LOGS/pingpong-$run-*.log"
    read -r events handoffs p50 p99 pmax < <(lat_stats "$run")
    log "ping-pong $run: $handoffs hand-offs of $events acquires: p50 ${p50} us, p99 ${p99} us, max ${pmax} us"
    ((handoffs >= 1000)) || die "ping-pong $run: only $handoffs hand-offs (the sessions did not alternate)"
    LAT_ROWS+=("| $kind | $4 | $handoffs | $events | $p50 | $p99 | $pmax |")
}

cmp3_run() {
    if want 3; then
        log "comparison 3: release -> waiter-running latency, $BENCH_LAT_ROUNDS rounds per lock of 2 sessions x $BENCH_HANDOFFS iterations"
        for ((r = 1; r <= BENCH_LAT_ROUNDS; r++)); do
            if [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
                pingpong syncwf mtx/bench/pingpong 0 "$r"
                check_no_syncwf_leftovers
            fi
            pingpong advisory - 4242 "$r"
        done
        for kind in syncwf advisory; do
            [[ $kind == syncwf && $BENCH_SKIP_SYNCWF == 1 ]] && continue
            read -r events handoffs p50 p99 pmax < <(lat_stats "$kind-%")
            LAT_ROWS+=("| **$kind** | **all** | **$handoffs** | **$events** | **$p50** | **$p99** | **$pmax** |")
            [[ $kind == syncwf ]] && L_P99=$p99 L_P50=$p50
            [[ $kind == advisory ]] && A_P99=$p99
        done
        if [[ $BENCH_SKIP_SYNCWF == 1 ]]; then L_P99=n/a L_P50=n/a; fi
        add_summary "3. hand-off latency" "syncwf p99 over all hand-offs, microseconds (p50 $L_P50), at most advisory's p99" "$L_P99" "<=" "$A_P99"
    else
        add_summary "3. hand-off latency" "syncwf p99 over all hand-offs, microseconds, at most advisory's p99" "n/a" "<=" n/a
    fi
}

cmp3_describe() {
    cat <<EOF
3. **Hand-off latency**: two sessions ping-pong one lock, each in a plpgsql
   loop of $BENCH_HANDOFFS iterations: acquire; stamp \`t_run\`; wait until the
   other session is asleep waiting for the lock (its \`wait_event_type\` in
   \`pg_stat_activity\` is \`Extension\` for syncwf, \`Lock\`/\`advisory\` for
   advisory locks); stamp \`t_rel\`; release. The lock is granted to the
   queued session at release, so the sessions strictly alternate and every
   release is a hand-off to a sleeping waiter; the wait for the peer is
   outside the measured interval (without it, a descheduled
   session on this 2-CPU machine is often not queued yet, and the releasing
   session just re-takes the free lock). The first session holds its first
   acquire until the second is queued. The stamps are kept in plpgsql arrays
   and inserted once at the end of each session. All stamps of both sessions
   are merged in time order; every wake-up (\`t_run\`) immediately preceded
   by a release (\`t_rel\`) of the other session is a hand-off, with latency
   \`t_run - t_rel\`: from just before the release call until the waiter's
   acquire call has returned. $BENCH_LAT_ROUNDS rounds per lock, interleaved
   (syncwf, advisory, syncwf, ...), of $((2 * BENCH_HANDOFFS - 1)) hand-offs each; the verdict is on
   the p99 over all syncwf hand-offs. Target: syncwf p99 at most advisory's
   p99 in the same run.
   Advisory locks are measured the same way for reference. Script:
   bench/pingpong.sql.
EOF
}

cmp3_details() {
    ((${#LAT_ROWS[@]} > 0)) || return 0
    cat <<EOF

### Hand-off latency, comparison 3 (microseconds)

Rounds in run order, then all rounds of a lock together (bold).

| lock | round | hand-offs | acquires | p50 | p99 | max |
| --- | --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${LAT_ROWS[@]}")
EOF
}
