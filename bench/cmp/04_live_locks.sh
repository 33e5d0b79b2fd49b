# shellcheck shell=bash
# bench/cmp/04_live_locks.sh:
# comparison 4, the cost of 1,000,000 live locks, and of the views.
#
# Workload 1's syncwf script with no other lock (E) and while an idle
# filler session holds $FILL mutexes (F), rounds in $BENCH_FULL_ORDER;
# then the views (sync_locks, sync_holders, sync_waiters) with 10 live
# locks and $NAMES cached semaphores.
# Targets: median tps empty / full at most 1.3; SELECT * FROM sync_locks
# at most 50 us over SELECT 1.
# Report: FILL_ROWS, its own section (cmp4_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

FILL=1000000          # live locks held by the filler in comparison 4

FILL_ROWS=()
declare -A VIEW_US=() VIEW_NET=()
filler_send() {  # filler_send TAG SQL: run SQL in the filler session, wait for it
    local tag=$1 sql=$2 i state
    echo "$sql /* bench_filler:$tag */;" >&3
    for ((i = 0; i < 6000; i++)); do   # 10 minutes
        state=$(q "SELECT state FROM pg_stat_activity
                    WHERE application_name = 'bench_filler'
                      AND query LIKE '%bench_filler:$tag */%'")
        [[ $state == idle ]] && break
        kill -0 "$FILLER_PID" 2>/dev/null || die "the filler session exited, see $LOGS/filler.log"
        sleep 0.1
    done
    [[ $state == idle ]] || die "filler step '$tag' did not finish within 10 minutes"
    ! grep -q ERROR "$LOGS/filler.log" || die "filler step '$tag' failed: $(grep -m1 ERROR "$LOGS/filler.log")"
    # the server's own timing of the statement
    q "SELECT round(extract(epoch FROM state_change - query_start)::numeric, 1)
         FROM pg_stat_activity WHERE application_name = 'bench_filler'"
}

cmp4_run() {
    if want 4 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 4: workload 1 with no other locks (E) and with $FILL live locks held by another session (F), order: $BENCH_FULL_ORDER"
        mkfifo "$BENCH_DIR/filler.fifo"
        chmod 644 "$BENCH_DIR/filler.fifo"
        is_root && chown "$OS_USER:" "$BENCH_DIR/filler.fifo"
        as_pg env PGAPPNAME=bench_filler "${PSQL[@]}" -d "$DB" -v ON_ERROR_STOP=0 \
            <"$BENCH_DIR/filler.fifo" >"$LOGS/filler.log" 2>&1 &
        FILLER_PID=$!
        exec 3>"$BENCH_DIR/filler.fifo"
        filled=0 fills=0
        E=() F=()
        if ((BENCH_WARMUP > 0)); then run_pgbench "4-warmup" "$SW_RANDOM" "$BENCH_WARMUP" >/dev/null; fi
        for step in $BENCH_FULL_ORDER; do
            case $step in
            E)
                if ((filled)); then
                    secs=$(filler_send "release$fills" "SELECT sync_release_all()")
                    n=$(q "SELECT count(*) FROM sync_holders")
                    [[ $n == 0 ]] || die "after sync_release_all() of the filler, $n holds remain"
                    log "filler released $FILL locks in ${secs}s"
                    FILL_ROWS+=("| release $fills | sync_release_all() | $secs |")
                    filled=0
                fi
                t=$(run_pgbench "4-empty-$((${#E[@]} + 1))" "$SW_RANDOM" "$BENCH_SECONDS")
                check_no_syncwf_leftovers
                E+=("$t")
                log "4 round $((${#E[@]})): empty $t tps"
                ;;
            F)
                if ((!filled)); then
                    fills=$((fills + 1))
                    secs=$(filler_send "fill$fills" "SELECT count(sync_acquire('mtx/fill/' || g)) FROM generate_series(1, $FILL) g")
                    n=$(q "SELECT count(*) FROM sync_holders WHERE lock_name LIKE 'mtx/fill/%'
                              AND pid = (SELECT pid FROM pg_stat_activity WHERE application_name = 'bench_filler')")
                    nl=$(q "SELECT count(*) FROM sync_locks")
                    [[ $n == "$FILL" ]] || die "the filler holds $n locks, not $FILL"
                    log "filler acquired $FILL locks in ${secs}s (sync_holders: $n, sync_locks: $nl)"
                    FILL_ROWS+=("| fill $fills | $FILL x sync_acquire() in one statement; then sync_holders = $n, sync_locks = $nl | $secs |")
                    filled=1
                fi
                t=$(run_pgbench "4-full-$((${#F[@]} + 1))" "$SW_RANDOM" "$BENCH_SECONDS")
                wait_idle
                n=$(q "SELECT count(*) FROM sync_holders")
                [[ $n == "$FILL" ]] || die "after a full round, $n holds instead of the filler's $FILL"
                F+=("$t")
                log "4 round $((${#F[@]})): full $t tps"
                ;;
            *) die "BENCH_FULL_ORDER: unknown step '$step' (use E and F)" ;;
            esac
        done
        # the views, with 10 live locks and $NAMES cached semaphores in the
        # table of $MAX_LOCKS slots: their cost must follow the live locks
        if ((filled)); then
            filler_send "views-release-fill" "SELECT sync_release_all()" >/dev/null
            filled=0
        fi
        filler_send "views-cache" "SELECT count(sync_try_acquire('sem/bench/' || g)) FROM generate_series(1, $NAMES) g" >/dev/null
        filler_send "views-uncache" "SELECT sync_release_all()" >/dev/null
        filler_send "views-hold" "SELECT count(sync_acquire('mtx/views/' || g)) FROM generate_series(1, 10) g" >/dev/null
        n=$(q "SELECT count(*) FROM sync_locks")
        [[ $n == 10 ]] || die "views: $n live locks, expected the filler's 10"
        # the round trip alone, then each view; a view's cost is the difference
        VIEW_US[trip]=$(query_latency select1 "SELECT 1")
        for v in sync_locks sync_holders sync_waiters; do
            VIEW_US[$v]=$(query_latency "$v" "SELECT * FROM $v")
            VIEW_NET[$v]=$(awk -v a="${VIEW_US[$v]}" -v b="${VIEW_US[trip]}" 'BEGIN {d = a - b; printf "%.1f\n", d < 0 ? 0 : d}')
            log "views: SELECT * FROM $v, 10 live locks, $NAMES cached: ${VIEW_US[$v]} us, ${VIEW_NET[$v]} us over SELECT 1 (${VIEW_US[trip]} us)"
        done
        filler_send "views-release" "SELECT sync_release_all()" >/dev/null
        exec 3>&-
        wait "$FILLER_PID" || true
        FILLER_PID=
        ((${#E[@]} > 0 && ${#F[@]} > 0)) || die "BENCH_FULL_ORDER needs at least one E and one F"
        R4_E=$(median "${E[@]}") R4_F=$(median "${F[@]}")
        ROUND_ROWS+=("| 4-fill | syncwf, no other locks | $(IFS='|'; echo "${E[*]}" | sed 's/|/ \/ /g') | $R4_E | $(spread "${E[@]}") |")
        ROUND_ROWS+=("| 4-fill | syncwf, $FILL other locks held | $(IFS='|'; echo "${F[*]}" | sed 's/|/ \/ /g') | $R4_F | $(spread "${F[@]}") |")
        R4=$(ratio "$R4_E" "$R4_F")
        add_summary "4. 1,000,000 live locks" "median tps empty / full ($R4_E / $R4_F)" "$R4" "<=" 1.3
        add_summary "views" "SELECT * FROM sync_locks with 10 live locks and $NAMES cached semaphores, $MAX_LOCKS slots: average latency over SELECT 1's (${VIEW_US[sync_locks]} - ${VIEW_US[trip]}), microseconds (sync_holders ${VIEW_NET[sync_holders]}, sync_waiters ${VIEW_NET[sync_waiters]})" "${VIEW_NET[sync_locks]}" "<=" 50
    else
        add_summary "4. 1,000,000 live locks" "median tps empty / full" "n/a" "<=" 1.3
        add_summary "views" "SELECT * FROM sync_locks with 10 live locks" "n/a" "<=" 50
    fi
}

cmp4_describe() {
    cat <<EOF
4. **Cost of 1,000,000 live locks**: workload 1's syncwf script with no other
   lock (E) and while another, idle session holds $FILL mutexes
   \`mtx/fill/1..$FILL\` (F), taken with
   \`SELECT count(sync_acquire('mtx/fill/' || g)) FROM generate_series(1, $FILL) g\`
   and verified through \`sync_holders\` before measuring. Rounds in the order
   \`$BENCH_FULL_ORDER\`; the filler releases with \`sync_release_all()\` before
   an E round. Target: median tps empty / full at most 1.3.
   **Views**, after the last round: the filler takes and releases the
   $NAMES semaphores \`sem/bench/1..$NAMES\` (which stay in the table as
   cached entries, the table having $MAX_LOCKS slots) and then holds 10
   mutexes; one pgbench client runs \`SELECT * FROM sync_locks\` (then
   \`sync_holders\`, \`sync_waiters\`) for 3 s, prepared, after
   \`SELECT 1\` the same way. Figure: pgbench's average latency of the view
   less that of \`SELECT 1\` (the round trip). Target: at most 50 us for
   \`sync_locks\`, whatever the table holds besides the live locks.
EOF
}

cmp4_details() {
    ((${#FILL_ROWS[@]} > 0)) || return 0
    cat <<EOF

### Filler (comparison 4)

| step | what | seconds (server-side statement time) |
| --- | --- | --- |
$(printf '%s\n' "${FILL_ROWS[@]}")
EOF
}
