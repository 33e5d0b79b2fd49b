# shellcheck shell=bash
# bench/cmp/08_launch.sh:
# comparison 8, launch-plan executions vs a Flyte-style count-then-insert.
#
# Each pgbench transaction launches an execution of a WAIT plan and
# reports it SUCCEEDED, over $LAUNCH_HISTORY terminal executions.
# Contenders, interleaved rounds: syncwf (bench/launch_syncwf.sql),
# flyteadmin's count-then-insert as Flyte ships it (flyte, with its
# index on phase) and without that index (flyte_nophase, for
# information): bench/launch_flyte.sql, tables from
# bench/launch_setup.sql (cmp8_setup).
# Target: median tps syncwf / flyte at least 1.2.
# Report: LAUNCH_ROWS and the count's plans, its own section
# (cmp8_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

LAUNCH_HISTORY=100000 # comparison 8: terminal executions in the tables
LAUNCH_MAX=1000       # ... and the max_concurrency of the WAIT plan launched

cmp8_setup() {
    if want 8; then
        # comparison 8: flyteadmin's schemas (flyte: as Flyte ships it, with its
        # index on phase; flyte_nophase: without it), the WAIT plan bench/dev/lp8 v1,
        # and the same $LAUNCH_HISTORY terminal executions for every contender
        as_pg "${PSQL[@]}" -d "$DB" -f "$ROOT/bench/launch_setup.sql" >/dev/null
        t=$SECONDS
        q "SELECT bench_flyte_schema('flyte', true, $LAUNCH_MAX), bench_flyte_schema('flyte_nophase', false, $LAUNCH_MAX);
           SELECT bench_launch_history('flyte', $LAUNCH_HISTORY), bench_launch_history('flyte_nophase', $LAUNCH_HISTORY)" >/dev/null
        if [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
            q "SELECT sync_launch_plan_register('bench', 'dev', 'lp8', 'v1', $LAUNCH_MAX, 'WAIT');
               SELECT bench_launch_history(NULL, $LAUNCH_HISTORY)" >/dev/null
        fi
        log "launch plan bench/dev/lp8 v1 (WAIT, max_concurrency $LAUNCH_MAX) and $LAUNCH_HISTORY terminal executions of it in flyte.executions, flyte_nophase.executions$([[ $BENCH_SKIP_SYNCWF != 1 ]] && echo " and sync_execution") ($((SECONDS - t)) s)"
    fi
}

LAUNCH_ROWS=()
# launch_counts CONTENDER: "terminal all" executions of bench/dev/lp8 in the
# contender's table (syncwf, or the reference schema flyte / flyte_nophase)
launch_counts() {
    if [[ $1 == syncwf ]]; then
        q "SELECT count(*) FILTER (WHERE phase IN ($LAUNCH_TERMINAL)), count(*)
             FROM sync_execution WHERE (project, domain, name) = ('bench', 'dev', 'lp8')" | tr '|' ' '
    else
        q "SELECT count(*) FILTER (WHERE e.phase IN ($LAUNCH_TERMINAL)), count(*)
             FROM $1.executions e JOIN $1.launch_plans l ON l.id = e.launch_plan_id
            WHERE (l.project, l.domain, l.name) = ('bench', 'dev', 'lp8')" | tr '|' ' '
    fi
}
# launch_run CONTENDER LABEL SECONDS: one pgbench run of comparison 8;
# sets LAUNCH_TPS.  Afterwards every execution the run created is terminal,
# one per pgbench transaction; they are deleted and the table vacuumed, so
# that every run starts from the same $LAUNCH_HISTORY terminal executions.
launch_run() {
    local who=$1 label=$2 secs=$3 tps nt term all t
    if [[ $who == syncwf ]]; then
        tps=$(run_pgbench "$label" "$ROOT/bench/launch_syncwf.sql" "$secs")
    else
        tps=$(PGBENCH_PGOPTIONS="-c search_path=$who" run_pgbench "$label" "$ROOT/bench/launch_flyte.sql" "$secs")
    fi
    wait_idle
    nt=$(awk -F': *' '/^number of transactions actually processed/ {split($2, a, "/"); print a[1]}' "$LOGS/pgbench-$label.log")
    [[ -n $nt ]] || die "comparison 8: no transaction count in $LOGS/pgbench-$label.log"
    read -r term all < <(launch_counts "$who")
    [[ $term == "$all" ]] || die "comparison 8, $label: $((all - term)) executions of bench/dev/lp8 are not terminal after the run"
    [[ $all == $((LAUNCH_HISTORY + nt)) ]] ||
        die "comparison 8, $label: $all executions of bench/dev/lp8 after $nt pgbench transactions, expected $((LAUNCH_HISTORY + nt))"
    t=$(date +%s.%N)
    if [[ $who == syncwf ]]; then
        check_keyed_rows
        [[ $(q "SELECT count(*) FROM sync_launch_event WHERE (project, domain, name) = ('bench', 'dev', 'lp8')") == 0 ]] ||
            die "comparison 8, $label: launch events recorded for bench/dev/lp8 (an execution waited or was refused)"
        q "DELETE FROM sync_execution WHERE execution_id LIKE 'b8/%'" >/dev/null
        q "VACUUM ANALYZE sync_execution, sync_state" >/dev/null
    else
        q "DELETE FROM $who.executions WHERE execution_name LIKE 'b8/%'" >/dev/null
        q "VACUUM ANALYZE $who.executions" >/dev/null
    fi
    read -r term all < <(launch_counts "$who")
    [[ "$term $all" == "$LAUNCH_HISTORY $LAUNCH_HISTORY" ]] ||
        die "comparison 8, $label: $term terminal of $all executions after the reset, expected $LAUNCH_HISTORY"
    LAUNCH_ROWS+=("| $label | $nt | $(since "$t") |")
    LAUNCH_TPS=$tps
}
# the count of the reference contenders (flyteadmin's), as planned in their schema
launch_count_plan() {
    q "SET search_path = $1;
       EXPLAIN (COSTS OFF)
       SELECT count(executions.id)
         FROM executions INNER JOIN launch_plans ON executions.launch_plan_id = launch_plans.id
        WHERE executions.execution_project = 'bench' AND executions.execution_domain = 'dev'
          AND launch_plans.name = 'lp8' AND executions.phase IN ('QUEUED', 'RUNNING')"
}

L8_PLAN_FLYTE="not run" L8_PLAN_NOPHASE="not run"
LAUNCH_CONTENDERS="syncwf flyte flyte_nophase"
[[ $BENCH_SKIP_SYNCWF == 1 ]] && LAUNCH_CONTENDERS="flyte flyte_nophase"

cmp8_run() {
    if want 8; then
        log "comparison 8: launch + terminal update on a WAIT plan with $LAUNCH_HISTORY terminal executions, syncwf vs flyteadmin's count-then-insert with (flyte, as shipped) and without (flyte_nophase) its index on phase, $CLIENTS clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
        declare -gA L8=() M8=()
        for who in flyte flyte_nophase; do
            launch_count_plan "$who" >"$LOGS/launch-count-plan-$who.txt"
        done
        L8_PLAN_FLYTE=$(grep -m1 -oE '(Seq Scan|Index Scan|Index Only Scan|Bitmap Index Scan)( using [a-z_]+)? on executions' "$LOGS/launch-count-plan-flyte.txt" || echo "see $LOGS/launch-count-plan-flyte.txt")
        L8_PLAN_NOPHASE=$(grep -m1 -oE '(Seq Scan|Index Scan|Index Only Scan|Bitmap Index Scan)( using [a-z_]+)? on executions' "$LOGS/launch-count-plan-flyte_nophase.txt" || echo "see $LOGS/launch-count-plan-flyte_nophase.txt")
        if ((BENCH_WARMUP > 0)); then
            for who in $LAUNCH_CONTENDERS; do
                launch_run "$who" "8-launch-warmup-$who" "$BENCH_WARMUP"
            done
        fi
        for ((r = 1; r <= BENCH_ROUNDS; r++)); do
            for who in $LAUNCH_CONTENDERS; do
                launch_run "$who" "8-launch-$who-$r" "$BENCH_SECONDS"
                L8[$who]+="$LAUNCH_TPS "
                log "8-launch round $r: $who $LAUNCH_TPS tps"
            done
        done
        for who in syncwf flyte flyte_nophase; do
            M8[$who]=n/a
            [[ -n ${L8[$who]:-} ]] || continue
            # shellcheck disable=SC2086  # the list of rounds
            M8[$who]=$(median ${L8[$who]})
            # shellcheck disable=SC2086
            ROUND_ROWS+=("| 8-launch | $who | $(echo ${L8[$who]} | sed 's/ / \/ /g') | ${M8[$who]} | $(spread ${L8[$who]}) |")
        done
        R8A=n/a R8B=n/a
        if [[ ${M8[syncwf]} != n/a ]]; then
            R8A=$(ratio "${M8[syncwf]}" "${M8[flyte]}")
            R8B=$(ratio "${M8[syncwf]}" "${M8[flyte_nophase]}")
        fi
        add_summary "8a. launch + terminal update, $LAUNCH_HISTORY in history, vs Flyte as shipped (v1.16: its count and its phase index)" "median tps syncwf / flyte (${M8[syncwf]} / ${M8[flyte]}; its count: $L8_PLAN_FLYTE)" "$R8A" ">=" 1.2
        add_summary "8b. the same vs Flyte without its phase index (before v1.16)" "median tps syncwf / flyte_nophase (${M8[syncwf]} / ${M8[flyte_nophase]}; its count: $L8_PLAN_NOPHASE)" "$R8B" info ''
    else
        add_summary "8a. launch + terminal update, $LAUNCH_HISTORY in history, vs Flyte as shipped (v1.16: its count and its phase index)" "median tps syncwf / flyte" "n/a" ">=" 1.2
        add_summary "8b. the same vs Flyte without its phase index (before v1.16)" "median tps syncwf / flyte_nophase" "n/a" info ''
    fi
}

cmp8_describe() {
    cat <<EOF
8. **Launch-plan executions with $LAUNCH_HISTORY in history**: $CLIENTS clients,
   each pgbench transaction launches a new execution of launch plan
   \`bench/dev/lp8\` version \`v1\` and reports it SUCCEEDED: two SQL
   transactions (two commits) in every contender. The version's policy is
   WAIT with max_concurrency $LAUNCH_MAX, and at most $CLIENTS executions are
   ever active, so every launch gets a slot at once and nothing waits (a
   launch that is not QUEUED at once stops the run): this measures what a
   launch costs with a policy in force (read the version's policy, count or
   take a slot, record the execution) and the terminal update that frees the
   slot, not time spent waiting, which depends only on how long executions
   run. Every run starts from the same $LAUNCH_HISTORY terminal executions of
   the plan (the same ids, phases and timestamps) in each contender's
   table: after a run, the executions it created are checked (all terminal,
   one per pgbench transaction), deleted, and the table is vacuumed.
   syncwf (bench/launch_syncwf.sql), 2 statements:
   \`SELECT 1 / (phase = 'QUEUED')::integer FROM sync_execution_create('bench', 'dev', 'lp8', 'v1', id)\`,
   which reads the version's policy, takes a slot of the plan's semaphore
   \`sem/launchplan/bench/dev/lp8\` (a keyed hold: a \`sync_state\` row) and
   inserts the execution into \`sync_execution\`; then
   \`SELECT sync_execution_update(id, 'SUCCEEDED')\`, a compare-and-swap on
   the execution's row whose commit releases the slot (deletes the
   \`sync_state\` row). syncwf does not count executions: the plan's slots
   are the semaphore's holders, kept in shared memory. The reference is
   flyteadmin's own check, as Flyte ships it since v1.16 (PR 6475,
   \`checkLaunchPlanConcurrency\`; bench/launch_flyte.sql, tables in
   bench/launch_setup.sql), on tables \`launch_plans\` (id, project, domain,
   name, version, max_concurrency; primary key (project, domain, name,
   version)) and \`executions\` (id, indexed; primary key
   (execution_project, execution_domain, execution_name); launch_plan_id,
   indexed; phase; created_at, updated_at), in 5 statements: \`BEGIN\`; one
   \`SELECT\` of whether flyteadmin's count -- \`count(executions.id)\` of
   \`executions\` joined to \`launch_plans\` on launch_plan_id, on the
   execution's project and domain and the plan's name (all versions), phase
   QUEUED or RUNNING -- is below the launched version's max_concurrency; an
   \`INSERT\` of the execution, QUEUED, when it is (pgbench \`\\gset\` /
   \`\\if\`); \`COMMIT\`; then
   \`UPDATE executions SET phase = 'SUCCEEDED', updated_at = clock_timestamp() WHERE <key> AND phase = 'QUEUED'\`.
   No lock serializes concurrent launches, as in flyteadmin, which only
   makes the reference cheaper (with a limit of $LAUNCH_MAX it is never
   reached). It runs in two schemas that differ by one index. **flyte** is
   Flyte as shipped: with \`idx_executions_phase\`, which its migration
   \`2025-05-29-add-index-executions-phase\` adds, so its count reads only
   the few active rows (its plan: $L8_PLAN_FLYTE). **flyte_nophase** is the
   schema before that migration, for information: its count reads all the
   plan's executions, history included (its plan: $L8_PLAN_NOPHASE). The
   other columns flyteadmin indexes (workflow id, task id, created at,
   error kind, user, state, deleted at) and its other columns (spec,
   closure, ...) are not modelled, which only makes the references' writes
   cheaper. Contenders interleaved (syncwf, flyte, flyte_nophase, syncwf,
   ...). Target: syncwf at least 1.2 x flyte.
EOF
}

cmp8_details() {
    ((${#LAUNCH_ROWS[@]} > 0)) || return 0
    cat <<EOF

### Comparison 8: runs and history resets

Every run, warm-ups included: the executions it created (one per pgbench
transaction, all terminal afterwards), then deleted and the table vacuumed,
back to $LAUNCH_HISTORY terminal executions. The plans of the references'
count, with the history in place, follow.

| run | executions created | reset (delete + vacuum), seconds |
| --- | --- | --- |
$(printf '%s\n' "${LAUNCH_ROWS[@]}")

flyte (as Flyte ships it, with idx_executions_phase):

\`\`\`
$(cat "$LOGS/launch-count-plan-flyte.txt")
\`\`\`

flyte_nophase (without it, before v1.16):

\`\`\`
$(cat "$LOGS/launch-count-plan-flyte_nophase.txt")
\`\`\`
EOF
}
