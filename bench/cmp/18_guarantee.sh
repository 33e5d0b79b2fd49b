# shellcheck shell=bash
# bench/cmp/18_guarantee.sh: comparison 18, guaranteed shares under a full
# parent: how soon a request within its child's guarantee is granted.
#
# Parent row b18/all of $GUAR_PARENT slots; four children b18/c1..c4, each
# of sizelimit $GUAR_CEILING (its ceiling) and guarantee $GUAR_G under it.
# $GUAR_CLIENTS clients, 4 per child, each one pgbench transaction that
# loops in plpgsql (bench/guarantee_setup.sql): acquire its child's
# semaphore, hold it $GUAR_HOLD_MS ms, release, think 0-$GUAR_THINK_MS ms unless
# its child is busy (two children at a time, in turns of $GUAR_PHASE_MS ms).
# Every request's wait, from request to grant, is stamped in the server;
# which requests were within their child's guarantee is told afterwards
# from the order of the grants in shared memory.  Contenders, alternating
# runs: the guarantees, and a control with none (guarantee NULL), for
# information.
# Target: p99 of the waits of the requests within their child's guarantee
# at most one hold time ($GUAR_HOLD_MS ms).
# Then preemption: $PRE_LOW low clients keep all $PRE_SLOTS slots of
# b18p/x (preempt_grace $PRE_GRACE_MS ms) with preemptible keyed holds they
# never give up; $PRE_URGENT urgent clients acquire it with a higher
# priority, each wait a preemption (bench/preempt_setup.sql).  Target: p99
# of those waits, request to grant, at most the grace plus 10 ms.
# Report: GUAR_ROWS, GUAR_CHILD_ROWS and PRE_ROWS, its own section
# (cmp18_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

GUAR_CLIENTS=16      # clients, GUAR_CLIENTS / 4 per child
GUAR_PARENT=8        # sizelimit of b18/all
GUAR_CEILING=3       # sizelimit of each child b18/c<n>
GUAR_G=2             # guarantee of each child (4 x 2 = the parent's 8)
GUAR_HOLD_MS=20      # hold time H
GUAR_THINK_MS=60     # think time of a client whose child is not busy: 0 to this, uniform
GUAR_PHASE_MS=1000   # each child is busy (no think time) two phases of four
GUAR_SLACK_MS=0.2    # a grant this soon after a request may come before it queued
GUAR_ROWS=()
GUAR_CHILD_ROWS=()
PRE_SLOTS=4          # sizelimit of b18p/x
PRE_LOW=4            # low clients, one preemptible keyed hold each
PRE_URGENT=2         # urgent clients (session holds, priority 5)
PRE_GRACE_MS=50      # preempt_grace of b18p/x
PRE_HOLD_MS=5        # an urgent client's hold
PRE_THINK_MS=200     # an urgent client's think time: 0 to this, uniform
PRE_ROWS=()
declare -A GUAR=() GUAR_SLOTS=()

cmp18_setup() {
    want 18 && [[ $BENCH_SKIP_SYNCWF != 1 ]] || return 0
    q "INSERT INTO sync_limit (name, sizelimit) VALUES ('b18/all', $GUAR_PARENT);
       INSERT INTO sync_limit (name, sizelimit, parent, guarantee)
       SELECT 'b18/c' || g, $GUAR_CEILING, 'b18/all', $GUAR_G FROM generate_series(1, 4) g" >/dev/null
    as_pg "${PSQL[@]}" -d "$DB" -f "$ROOT/bench/guarantee_setup.sql" >/dev/null
    q "INSERT INTO sync_limit (name, sizelimit, preempt_grace)
       VALUES ('b18p/x', $PRE_SLOTS, interval '$PRE_GRACE_MS ms')" >/dev/null
    as_pg "${PSQL[@]}" -d "$DB" -f "$ROOT/bench/preempt_setup.sql" >/dev/null
}

# pre_stats WHERE: over the window's urgent requests matching WHERE (a
# condition on bench_preempt): count, wait p50, p99, max (ms), how many
# waited longer than the grace plus 10 ms
pre_stats() {
    q "SELECT count(*),
              round(percentile_disc(0.5) WITHIN GROUP (ORDER BY w)::numeric, 1),
              round(percentile_disc(0.99) WITHIN GROUP (ORDER BY w)::numeric, 1),
              round(max(w)::numeric, 1),
              count(*) FILTER (WHERE w > $PRE_GRACE_MS + 10)
         FROM (SELECT extract(epoch FROM p.t_grant - p.t_req) * 1000 AS w
                 FROM bench_preempt p
                 JOIN (SELECT run, min(t_req) + interval '$BENCH_WARMUP s' AS w0,
                              min(t_req) + interval '$((BENCH_WARMUP + BENCH_SECONDS)) s' AS w1
                         FROM bench_preempt GROUP BY run) r USING (run)
                WHERE p.t_req >= r.w0 AND p.t_req < r.w1 AND $1) x" | tr '|' ' '
}

# pre_run ROUND: the low clients in the background, the urgent ones for
# the window, then the low ones ended and their rows deleted
pre_run() {
    local r=$1 run=18p-$1 rc=0 secs out lowout lowpid n p50 p99 max over pre0 pre1
    secs=$((BENCH_WARMUP + BENCH_SECONDS))
    out=$LOGS/pgbench-$run.log
    lowout=$LOGS/pgbench-$run-low.log
    wait_idle
    pre0=$(q "SELECT coalesce(sum(preemptions), 0) FROM sync_lock_stats WHERE lock_name = 'sem/b18p/x'")
    as_pg env PGAPPNAME=bench_preempt_low timeout --signal=INT --kill-after=30 $((secs + 60)) \
        "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -U postgres -n \
        -c "$PRE_LOW" -j 1 -T $((secs + 30)) -D secs=$((secs + 30)) \
        -f "$ROOT/bench/syncwf_preempt_low.sql" "$DB" >"$lowout" 2>&1 &
    lowpid=$!
    # every slot held by a low client before the urgent ones start
    for ((n = 0; ; n++)); do
        [[ $(q "SELECT count(*) FROM sync_state WHERE name = 'sem/b18p/x' AND held") == "$PRE_SLOTS" ]] && break
        ((n < 100)) || die "comparison 18, $run: the low clients did not take every slot within 10 s, see $lowout"
        sleep 0.1
    done
    as_pg timeout --signal=INT --kill-after=30 $((secs + 60)) \
        "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -U postgres -n -M prepared \
        -c "$PRE_URGENT" -j 1 -t 1 -D run="$run" -D secs="$secs" \
        -D hold="$PRE_HOLD_MS" -D think="$PRE_THINK_MS" \
        -f "$ROOT/bench/syncwf_preempt_urgent.sql" "$DB" >"$out" 2>&1 || rc=$?
    q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
        WHERE application_name = 'bench_preempt_low'" >/dev/null
    wait "$lowpid" || true
    q "DELETE FROM sync_state WHERE name = 'sem/b18p/x'" >/dev/null
    # the low clients' only way out is to be terminated (FATAL) at the end
    if grep -q 'ERROR:' "$lowout"; then
        die "comparison 18, $run: a low client failed: $(grep -m2 'ERROR:' "$lowout" | tr '\n' ' ') -- see $lowout"
    fi
    ((rc == 0)) || die "pgbench $run failed (exit $rc): $(grep -m3 -iE 'error|abort' "$out" | tr '\n' ' ') -- see $out"
    check_no_syncwf_leftovers
    pre1=$(q "SELECT coalesce(sum(preemptions), 0) FROM sync_lock_stats WHERE lock_name = 'sem/b18p/x'")
    ((pre1 > pre0)) || die "comparison 18, $run: no hold was preempted, see $lowout and $out"
    read -r n p50 p99 max over < <(pre_stats "run = '$run'")
    log "18 preemption round $r: $n urgent requests in the window, wait p50 $p50 ms, p99 $p99 ms, max $max ms, $over longer than the grace ($PRE_GRACE_MS ms) + 10 ms; $((pre1 - pre0)) preemptions in the run"
    PRE_ROWS+=("| $r | $n | $((pre1 - pre0)) | $p50 | $p99 | $max | $over |")
}

# guar_stats WHERE: one line over the classified requests that match
# WHERE (a condition on bench_guarantee_req): within the guarantee: count,
# how many at a full parent, p50, p99, max (ms), how many waited longer
# than H, how many were passed by a borrowing grant and by how many grants;
# would borrow: count, p50, p99, max; all requests' holds (grant to
# release, ms): p99, max
guar_stats() {
    q "SELECT count(*) FILTER (WHERE within),
              count(*) FILTER (WHERE within AND full_parent),
              coalesce(round(percentile_disc(0.5) WITHIN GROUP (ORDER BY wait_ms) FILTER (WHERE within)::numeric, 1)::text, '-'),
              coalesce(round(percentile_disc(0.99) WITHIN GROUP (ORDER BY wait_ms) FILTER (WHERE within)::numeric, 1)::text, '-'),
              coalesce(round(max(wait_ms) FILTER (WHERE within)::numeric, 1)::text, '-'),
              count(*) FILTER (WHERE within AND wait_ms > $GUAR_HOLD_MS),
              count(*) FILTER (WHERE within AND passed_by > 0),
              coalesce(sum(passed_by) FILTER (WHERE within), 0),
              count(*) FILTER (WHERE NOT within),
              coalesce(round(percentile_disc(0.5) WITHIN GROUP (ORDER BY wait_ms) FILTER (WHERE NOT within)::numeric, 1)::text, '-'),
              coalesce(round(percentile_disc(0.99) WITHIN GROUP (ORDER BY wait_ms) FILTER (WHERE NOT within)::numeric, 1)::text, '-'),
              coalesce(round(max(wait_ms) FILTER (WHERE NOT within)::numeric, 1)::text, '-'),
              coalesce(round(percentile_disc(0.99) WITHIN GROUP (ORDER BY hold_ms)::numeric, 1)::text, '-'),
              coalesce(round(max(hold_ms)::numeric, 1)::text, '-')
         FROM bench_guarantee_req WHERE $1" | tr '|' ' '
}

# guar_slots WHERE: the mean slots each child held over the windows of the
# runs that match WHERE (a condition on bench_guarantee_slots), "c1 / c2 /
# c3 / c4"; their sum; and the mean slots of a busy child and of a quiet
# one, "busy / quiet" (two of each at every moment)
guar_slots() {
    q "WITH w AS (SELECT sum(window_secs) AS secs
                    FROM (SELECT DISTINCT run, window_secs FROM bench_guarantee_slots WHERE $1) r)
       SELECT (SELECT string_agg(to_char(s, 'FM0.00'), ' / ' ORDER BY child)
                 FROM (SELECT child, sum(slot_secs) / (SELECT secs FROM w) AS s
                         FROM bench_guarantee_slots WHERE $1 GROUP BY child) c),
              (SELECT to_char(sum(slot_secs) / (SELECT secs FROM w), 'FM0.00')
                 FROM bench_guarantee_slots WHERE $1),
              (SELECT string_agg(to_char(s, 'FM0.00'), ' / ' ORDER BY busy DESC)
                 FROM (SELECT busy, sum(slot_secs) / (2 * (SELECT secs FROM w)) AS s
                         FROM bench_guarantee_slots WHERE $1 GROUP BY busy) b)"
}

# guar_run MODE ROUND: one run of every client, guarantees on or off
guar_run() {
    local mode=$1 r=$2 run=18-$1-$2 g=NULL rc=0 out n secs sc ssum sroles
    local wn wfull wp50 wp99 wmax wover wpass wpg bn bp50 bp99 bmax hp99 hmax
    [[ $mode == guarantee ]] && g=$GUAR_G
    q "UPDATE sync_limit SET guarantee = $g WHERE parent = 'b18/all'" >/dev/null
    # (one second past the window, so that it ends with every client busy)
    secs=$((BENCH_WARMUP + BENCH_SECONDS + 1))
    out=$LOGS/pgbench-$run.log
    wait_idle
    as_pg timeout --signal=INT --kill-after=30 $((secs + 60)) \
        "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -U postgres -n -M prepared \
        -c "$GUAR_CLIENTS" -j "$THREADS" -t 1 -D run="$run" -D secs="$secs" \
        -D hold="$GUAR_HOLD_MS" -D think="$GUAR_THINK_MS" -D phase="$GUAR_PHASE_MS" \
        -f "$ROOT/bench/syncwf_guarantee.sql" "$DB" >"$out" 2>&1 || rc=$?
    ((rc == 0)) || die "pgbench $run failed (exit $rc): $(grep -m3 -iE 'error|abort' "$out" | tr '\n' ' ') -- see $out"
    check_no_syncwf_leftovers
    n=$(q "SELECT count(DISTINCT client) FROM bench_guarantee WHERE run = '$run'")
    [[ $n == "$GUAR_CLIENTS" ]] || die "comparison 18, $run: $n of $GUAR_CLIENTS clients recorded their requests, see $out"
    q "INSERT INTO bench_guarantee_runs
       SELECT '$run', '$mode', $r, min(t_req) + interval '$BENCH_WARMUP s',
              min(t_req) + interval '$((BENCH_WARMUP + BENCH_SECONDS)) s', $GUAR_PHASE_MS
         FROM bench_guarantee WHERE run = '$run'" >/dev/null
    q "SELECT bench_guarantee_classify('$run', $GUAR_G, $GUAR_PARENT, interval '$GUAR_SLACK_MS ms')" >/dev/null
    read -r wn wfull wp50 wp99 wmax wover wpass wpg bn bp50 bp99 bmax hp99 hmax < <(guar_stats "run = '$run'")
    IFS='|' read -r sc ssum sroles < <(guar_slots "run = '$run'")
    log "18 round $r, $mode: $wn requests within the guarantee ($wfull at a full parent): wait p50 $wp50 ms, p99 $wp99 ms, max $wmax ms, $wover longer than H, $wpass passed by $wpg borrowing grants; $bn would borrow: p50 $bp50 ms, p99 $bp99 ms, max $bmax ms; holds p99 $hp99 ms, max $hmax ms; mean slots held c1-c4 $sc (sum $ssum), busy / quiet child $sroles"
    GUAR_ROWS+=("| $mode | $r | $wn | $wfull | $wp50 | $wp99 | $wmax | $wover | $wpass ($wpg) | $bn | $bp50 | $bp99 | $bmax | $hp99 / $hmax | $sc | $sroles |")
}

cmp18_run() {
    local r mode c sc ssum sroles wn wfull wp50 wp99 wmax wover wpass wpg bn bp50 bp99 bmax hp99 hmax
    if want 18 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 18: guaranteed shares, $GUAR_CLIENTS clients on 4 children (ceiling $GUAR_CEILING, guarantee $GUAR_G) of a parent of $GUAR_PARENT, holds of $GUAR_HOLD_MS ms, guarantees vs none, $BENCH_LAT_ROUNDS rounds of ${BENCH_SECONDS}s each"
        for ((r = 1; r <= BENCH_LAT_ROUNDS; r++)); do
            for mode in guarantee control; do
                guar_run "$mode" "$r"
            done
        done
        q "UPDATE sync_limit SET guarantee = $GUAR_G WHERE parent = 'b18/all'" >/dev/null
        # every request of every run, for a closer look
        q "COPY (SELECT * FROM bench_guarantee ORDER BY run, t_req) TO STDOUT WITH (FORMAT csv, HEADER)" \
            >"$LOGS/guarantee-requests.csv"
        for mode in guarantee control; do
            GUAR[$mode]=$(guar_stats "mode = '$mode'")
            read -r wn wfull wp50 wp99 wmax wover wpass wpg bn bp50 bp99 bmax hp99 hmax <<<"${GUAR[$mode]}"
            IFS='|' read -r sc ssum sroles < <(guar_slots "mode = '$mode'")
            GUAR_ROWS+=("| **$mode** | **all** | **$wn** | **$wfull** | **$wp50** | **$wp99** | **$wmax** | **$wover** | **$wpass ($wpg)** | **$bn** | **$bp50** | **$bp99** | **$bmax** | **$hp99 / $hmax** | **$sc** | **$sroles** |")
            GUAR_SLOTS[$mode]=$sroles
            for c in 1 2 3 4; do
                read -r wn wfull wp50 wp99 wmax wover wpass wpg bn bp50 bp99 bmax hp99 hmax < <(guar_stats "mode = '$mode' AND child = $c")
                GUAR_CHILD_ROWS+=("| $mode | c$c | $wn | $wp50 | $wp99 | $wmax | $wover | $wpass | $bn | $bp50 | $bp99 |")
            done
        done
        read -r wn wfull wp50 wp99 wmax wover wpass wpg bn bp50 bp99 bmax hp99 hmax <<<"${GUAR[guarantee]}"
        add_summary "18. guaranteed shares" "p99 wait from request to grant, ms, of the $wn requests within their child's guarantee ($wfull at a full parent; p50 $wp50, max $wmax; $wover longer than H; $wpass passed by a borrowing grant over $GUAR_SLACK_MS ms after the request; holds p99 $hp99, max $hmax), at most one hold time H" \
            "$wp99" "<=" "$GUAR_HOLD_MS"
        add_summary "18. guaranteed shares, borrowing" "p99 wait, ms, of the $bn requests that would borrow (p50 $bp50, max $bmax); mean slots held by a busy / a quiet child ${GUAR_SLOTS[guarantee]}" "$bp99" info ''
        read -r wn wfull wp50 wp99 wmax wover wpass wpg bn bp50 bp99 bmax hp99 hmax <<<"${GUAR[control]}"
        add_summary "18. guaranteed shares, control" "no guarantees, the same workload: p99 wait, ms, of the $wn requests a guarantee of $GUAR_G would cover (p50 $wp50, max $wmax; $wover longer than H; $wpass passed by $wpg grants beyond $GUAR_G); of the $bn others p99 $bp99; mean slots held by a busy / a quiet child ${GUAR_SLOTS[control]}" "$wp99" info ''
        log "comparison 18, preemption: $PRE_LOW low clients hold all $PRE_SLOTS slots with preemptible keyed holds (grace $PRE_GRACE_MS ms), $PRE_URGENT urgent clients of priority 5, $BENCH_LAT_ROUNDS rounds of ${BENCH_SECONDS}s each"
        for ((r = 1; r <= BENCH_LAT_ROUNDS; r++)); do
            pre_run "$r"
        done
        local pn pp50 pp99 pmax pover
        read -r pn pp50 pp99 pmax pover < <(pre_stats "true")
        PRE_ROWS+=("| **all** | **$pn** | | **$pp50** | **$pp99** | **$pmax** | **$pover** |")
        add_summary "18. preemption" "p99 wait from request to grant, ms, of the $pn urgent requests that each preempt a preemptible keyed hold with a grace of $PRE_GRACE_MS ms (p50 $pp50, max $pmax; $pover longer than the grace + 10 ms), at most the grace + 10 ms" \
            "$pp99" "<=" "$((PRE_GRACE_MS + 10))"
    else
        add_summary "18. guaranteed shares" "p99 wait from request to grant, ms, of the requests within their child's guarantee, at most one hold time H" "n/a" "<=" "$GUAR_HOLD_MS"
        add_summary "18. guaranteed shares, borrowing" "p99 wait, ms, of the requests that would borrow" "n/a" info ''
        add_summary "18. guaranteed shares, control" "no guarantees, the same workload: p99 wait, ms, of the requests a guarantee of $GUAR_G would cover" "n/a" info ''
        add_summary "18. preemption" "p99 wait from request to grant, ms, of urgent requests that each preempt a keyed hold with a grace of $PRE_GRACE_MS ms, at most the grace + 10 ms" "n/a" "<=" "$((PRE_GRACE_MS + 10))"
    fi
}

cmp18_describe() {
    cat <<EOF
18. **Guaranteed shares**: a parent row \`b18/all\` of $GUAR_PARENT slots and
   four children \`b18/c1\` to \`b18/c4\`, each of \`sizelimit\` $GUAR_CEILING
   (its ceiling for borrowing) and \`guarantee\` $GUAR_G (together the
   parent's $GUAR_PARENT). $GUAR_CLIENTS clients, $((GUAR_CLIENTS / 4)) per
   child, each one pgbench transaction that loops in plpgsql
   (bench/guarantee_setup.sql): stamp \`clock_timestamp()\`;
   \`sync_acquire\` its child's semaphore (session scope, waiting); stamp
   again, and read the grant's time in shared memory
   (\`sync_holders.since\`); hold it until $GUAR_HOLD_MS ms after the acquire
   returned (\`pg_sleep\`: the hold time H); release; then think 0 to
   $GUAR_THINK_MS ms (uniform) before the next request, except while its
   child is **busy**: two children at a time, in turns of $GUAR_PHASE_MS ms
   (c1 and c2, then c2 and c3, ...), whose clients ask again at once. So
   at every moment two children want up to 4 slots each and borrow beyond
   their guarantee, up to their ceiling, while the other two come and go,
   often under their guarantee, and the parent is mostly full. (Without
   think time every child settles at its guarantee and its own waiters take
   back every slot it frees: no request ever finds its child under its
   guarantee.) A request is **within its child's guarantee** when the
   requests of its child that held a slot or were queued ahead of it, plus
   itself, are at most $GUAR_G. That is told after the run from the grants'
   order: a child's queue is first come, first served (one slot each, one
   priority), so its grants come in the order its requests queued, and
   each grant's time in shared memory is exact; the requests before it are
   those of its child granted before it and not yet released at its
   request. (Reading \`sync_locks\` just before \`sync_acquire\` is not
   exact: two clients of a child that read it at the same moment both see
   the same queue, and the second to queue counts itself within the
   guarantee though it is behind the first.) The others would borrow. A
   request's **wait** is from the stamp before \`sync_acquire\` to the
   stamp after it returns: the call and the wake-up included. While such
   a request waits at a full parent its child holds less than its
   guarantee, so others hold more than theirs (the guarantees add up to
   the parent): borrowers, each releasing within one hold; and the
   guarantee gives the request the first slot freed under the parent that
   no earlier request within its own guarantee takes. Target: p99 of these
   waits at most one hold time, H = $GUAR_HOLD_MS ms. Also counted, for
   these requests: how many were **passed** by a grant that borrowed
   (another child's request granted while this one waited, with at least
   $GUAR_G other holders of its child at that moment), which the guarantee
   rules out. A request's way into the queue is not seen, only its stamp
   before the call, and a grant just after the stamp may come before it
   queued (the call waits for the partition that the granting release
   holds, and a backend may be descheduled on the way); grants
   within $GUAR_SLACK_MS ms of the stamp are not counted. The
   requests of the first $BENCH_WARMUP s of each run and those after
   $BENCH_SECONDS s more are left out (the clients run one second longer,
   so that the window ends under full load). Runs alternate with a
   **control** (the same rows with \`guarantee\` NULL: one order, priority
   then arrival, across the children), $BENCH_LAT_ROUNDS runs each. (With
   $GUAR_CLIENTS clients on $GUAR_PARENT slots, each held for H, that single order
   also grants most requests within about one hold; what the guarantee
   changes is who goes first: the p50, and the passes.) For
   information, the waits of the requests that would borrow, the control's
   waits of the same two kinds (there "within" means within a guarantee of
   $GUAR_G, had there been one), the holds' p99 and max (from the
   acquire's return to the release: longer than H only when the machine
   stalls, \`pg_sleep\` oversleeping, which stretches the waits too), and
   the mean slots each child held, and held by a busy child and by a quiet
   one.

   **Preemption**, in the same comparison: a semaphore \`b18p/x\` of
   $PRE_SLOTS slots with \`preempt_grace\` $PRE_GRACE_MS ms. $PRE_LOW low
   clients (bench/syncwf_preempt_low.sql) each request it for a holder key
   of their own with priority 0 and \`preemptible => true\`, wait for the
   grant (\`sync_wait\`) and keep the hold until it is gone, polling
   \`sync_is_held\` every 5 ms: they never release it themselves, so each
   preemption lasts its whole grace; then they ask again. Once they hold
   every slot, $PRE_URGENT urgent clients (bench/preempt_setup.sql) loop:
   think 0 to $PRE_THINK_MS ms, stamp, \`sync_acquire\` with priority 5
   (session scope, waiting), stamp, hold $PRE_HOLD_MS ms, release. Every
   urgent request that finds the slots taken by low holds has one
   preempted (the worker notes it, marks the victim and writes its row;
   the lease expiry ends it at the deadline and hands the slot over in
   that transaction). Its **wait**, from the stamp before
   \`sync_acquire\` to the one after, includes the worker's reaction, the
   whole grace and the hand-over. Target: p99 at most the grace plus
   10 ms, $((PRE_GRACE_MS + 10)) ms. Requests of the first $BENCH_WARMUP s
   of each run are left out; $BENCH_LAT_ROUNDS runs of $BENCH_SECONDS s.
EOF
}

cmp18_details() {
    ((${#GUAR_ROWS[@]} > 0)) || return 0
    cat <<EOF

### Guaranteed shares, comparison 18 (milliseconds)

Per run, in run order, then all runs of a mode together (bold): the
requests within their child's guarantee of $GUAR_G (how many, how many at
a full parent, their wait's p50, p99 and max, how many waited longer than
one hold time H = $GUAR_HOLD_MS ms, how many were passed by a grant that
borrowed and, in brackets, by how many such grants), the requests that
would borrow, the holds of all requests (from the acquire's return to the
release: H unless the machine stalls), and the mean slots each child held (c1 / c2 / c3 / c4: each
hold from its grant to the release) and a child held while busy and while
quiet (by the phase at each grant). The control has no guarantees; its
"within" requests are those a guarantee of $GUAR_G would cover, and the
grants that pass them those beyond $GUAR_G.

| mode | round | within | at full parent | p50 | p99 | max | > H | passed (by grants) | borrow | p50 | p99 | max | holds p99 / max | mean slots held | busy / quiet child |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${GUAR_ROWS[@]}")

Per child, all runs of a mode together:

| mode | child | within | p50 | p99 | max | > H | passed | borrow | p50 | p99 |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${GUAR_CHILD_ROWS[@]}")

Preemption: per run, then all runs together (bold), the urgent requests
in the window, the preemptions \`sync_lock_stats\` counted in the run, and
the waits from request to grant (grace $PRE_GRACE_MS ms; the last column
counts waits longer than the grace + 10 ms):

| round | urgent requests | preemptions | p50 | p99 | max | > grace + 10 |
| --- | --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${PRE_ROWS[@]}")
EOF
}
