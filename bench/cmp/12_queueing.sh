# shellcheck shell=bash
# bench/cmp/12_queueing.sh:
# comparison 12, best-effort queueing: slot utilisation.
#
# $QUEUE_CLIENTS clients on one semaphore of 8 slots, 5-slot and 1-slot
# holds of 10 ms (bench/queueing_big.sql, bench/queueing_small.sql).
# Contenders, alternating rounds: strict and best-effort queueing.
# Target: best-effort's median utilisation at least strict's.
# Report: QUEUE_ROWS, its own section (cmp12_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

QUEUE_CLIENTS=16     # clients on the one semaphore of 8 slots
QUEUE_ROWS=()

cmp12_run() {
    if want 12 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 12: slot utilisation of one semaphore of 8 slots, $QUEUE_CLIENTS clients holding 5 slots (1 in 4) or 1 slot for 10 ms, strict vs best-effort queueing, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
        q "INSERT INTO sync_limit (name, sizelimit, queueing) VALUES ('benchq/pool', 8, 'strict')" >/dev/null
        declare -gA QU=() QBIG=()
        QARGS=(-f "$ROOT/bench/queueing_big.sql@1" -f "$ROOT/bench/queueing_small.sql@3")
        for ((r = 0; r <= BENCH_ROUNDS; r++)); do
            for mode in strict best_effort; do
                q "UPDATE sync_limit SET queueing = '$mode' WHERE name = 'benchq/pool'" >/dev/null
                if ((r == 0)); then
                    ((BENCH_WARMUP > 0)) || continue
                    pgbench_txlog "12-$mode-warmup" "$BENCH_WARMUP" "$QUEUE_CLIENTS" "$THREADS" "${QARGS[@]}"
                    rm -f "$TXLOG"
                    continue
                fi
                secs=$BENCH_SECONDS
                pgbench_txlog "12-$mode-$r" "$secs" "$QUEUE_CLIENTS" "$THREADS" "${QARGS[@]}"
                # slot-seconds held: each transaction holds its slots from the
                # acquire's return to the release, about its latency minus the
                # acquire's wait; the wait is not logged per statement, so the
                # hold is taken as the 10 ms sleep plus one round trip, the
                # same for both modes (a lower bound of the true utilisation)
                n_big=$(awk '$1 == 0' "$TXLOG" | wc -l)
                n_small=$(awk '$1 == 1' "$TXLOG" | wc -l)
                pct() {  # pct SCRIPT FRACTION: that percentile of its latencies, ms
                    awk -v s="$1" '$1 == s {print $2}' "$TXLOG" | sort -n |
                        awk -v f="$2" '{a[NR] = $1} END {i = int(NR * f); if (i < 1) i = 1; if (i > NR) i = NR; printf "%.1f\n", a[i] / 1000}'
                }
                big_p99=$(pct 0 0.99); big_max=$(pct 0 1); small_p99=$(pct 1 0.99)
                util=$(awk -v b="$n_big" -v s="$n_small" -v secs="$secs" 'BEGIN {printf "%.3f\n", (b * 5 + s) * 0.0102 / (8 * secs)}')
                rm -f "$TXLOG"
                QU[$mode]+="$util "
                QBIG[$mode]+="$big_max "
                log "12 round $r, $mode: utilisation $util; big: $n_big done, p99 ${big_p99} ms, max ${big_max} ms; small: $n_small done, p99 ${small_p99} ms"
                QUEUE_ROWS+=("| $r | $mode | $util | $n_big | $big_p99 | $big_max | $n_small | $small_p99 |")
            done
        done
        q "DELETE FROM sync_limit WHERE name = 'benchq/pool'" >/dev/null
        U_STRICT=$(median_fmt '%.3f' ${QU[strict]})
        U_BE=$(median_fmt '%.3f' ${QU[best_effort]})
        BIG_MAX_STRICT=$(printf '%s\n' ${QBIG[strict]} | sort -g | tail -1)
        BIG_MAX_BE=$(printf '%s\n' ${QBIG[best_effort]} | sort -g | tail -1)
        add_summary "12. best-effort queueing" "median slot utilisation, best-effort / strict ($U_BE / $U_STRICT), mixed 5-slot and 1-slot holds of 10 ms on 8 slots" \
            "$(ratio "$U_BE" "$U_STRICT")" ">=" 1.0
        add_summary "12. best-effort queueing" "longest 5-slot transaction (wait, hold and release, ms), best-effort vs strict ($BIG_MAX_BE vs $BIG_MAX_STRICT): the bound of syncwf.max_passes at work" \
            "$(ratio "$BIG_MAX_BE" "$BIG_MAX_STRICT")" info ''
    else
        add_summary "12. best-effort queueing" "median slot utilisation, best-effort / strict" "n/a" ">=" 1.0
    fi
}

cmp12_describe() {
    cat <<EOF
12. **Best-effort queueing**: one semaphore \`sem/benchq/pool\` of 8
   slots, $QUEUE_CLIENTS clients, each transaction a 5-slot hold (one in four,
   bench/queueing_big.sql) or a 1-slot hold (bench/queueing_small.sql) of
   10 ms (\`pg_sleep(0.01)\` between acquire and release). In a strict
   queue a 5-slot request at the front keeps the free slots idle until 5
   are free; with \`queueing = 'best_effort'\` 1-slot requests behind it
   that fit are granted, each waiter passed at most
   \`syncwf.max_passes\` (10) times. The rounds alternate the two modes
   (an \`UPDATE sync_limit\` between them), $BENCH_ROUNDS rounds of
   ${BENCH_SECONDS} s each after a warm-up of each. Utilisation is the slot-time
   the completed transactions held, each counted as its slots times
   10.2 ms (the sleep and about one round trip: slightly less than the true
   hold, alike in both modes), over 8 slots times the run's length.
   Target: best-effort's median utilisation at least strict's. For
   information, the longest transaction of a 5-slot request (its wait,
   hold and release) in each mode shows what the passes cost the request
   they pass, within the bound.
EOF
}

cmp12_details() {
    ((${#QUEUE_ROWS[@]} > 0)) || return 0
    cat <<EOF

### Slot utilisation, comparison 12

Per round and mode: utilisation of the 8 slots, then for the 5-slot and
1-slot transactions how many completed and their latency (wait, hold and
release) in milliseconds.

| round | queueing | utilisation | 5-slot done | 5-slot p99 | 5-slot max | 1-slot done | 1-slot p99 |
| --- | --- | --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${QUEUE_ROWS[@]}")
EOF
}
