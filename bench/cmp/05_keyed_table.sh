# shellcheck shell=bash
# bench/cmp/05_keyed_table.sh:
# comparison 5, keyed holds vs a plain-SQL table semaphore.
#
# $CLIENTS clients request and release a random semaphore of $KEYED_SEMS
# (limit $KEYED_LIMIT) for a random holder key.  Contenders, interleaved
# (compare_ab, with VACUUM and CHECKPOINT before every round): syncwf
# (bench/keyed_random.sql) and a table semaphore (bench/table_semaphore.sql,
# tables from bench/keyed_setup.sql, loaded with the database).
# Targets: median tps syncwf / table at least 1.6; each contender's
# spread (fastest / slowest round) at most 1.25.
# It also waits for the syncwf worker, which comparisons 5 to 9 need.
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

cmp5_run() {
    # the keyed and launch-plan comparisons (5-9) need the worker: wait for
    # it once, here, before the first of them
    if [[ $BENCH_SKIP_SYNCWF != 1 ]] && { want 5 || want 6 || want 7 || want 8 || want 9; }; then
        wait_worker
    fi

    if want 5; then
        SW_KEYED=$ROOT/bench/keyed_random.sql
        [[ $BENCH_SKIP_SYNCWF == 1 ]] && SW_KEYED=-
        log "comparison 5: keyed holds vs a table semaphore, $CLIENTS clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
        ROUND_VACUUM="bench_sem"
        [[ $BENCH_SKIP_SYNCWF != 1 ]] && ROUND_VACUUM+=", sync_state"
        compare_ab "5-keyed" syncwf "$SW_KEYED" table "$ROOT/bench/table_semaphore.sql"
        ROUND_VACUUM=
        R5_SW=$MED_A R5_TAB=$MED_B
        [[ $BENCH_SKIP_SYNCWF != 1 ]] && check_keyed_rows
        n=$(q "SELECT count(*) FROM bench_sem")
        [[ $n == 0 ]] || die "$n bench_sem rows left after the table semaphore's rounds"
        R5=n/a; [[ $R5_SW != n/a ]] && R5=$(ratio "$R5_SW" "$R5_TAB")
        add_summary "5. keyed holds vs table semaphore" "median tps syncwf / table ($R5_SW / $R5_TAB)" "$R5" ">=" 1.6
        R5S=$SPREAD_A; [[ $R5S == n/a ]] || R5S=$(printf '%s\n' "$SPREAD_A" "$SPREAD_B" | sort -g | tail -n 1)
        add_summary "5. steady rounds" "largest spread (fastest / slowest round) of a contender (syncwf $SPREAD_A, table $SPREAD_B)" "$R5S" "<=" 1.25
    else
        add_summary "5. keyed holds vs table semaphore" "median tps syncwf / table" "n/a" ">=" 1.6
        add_summary "5. steady rounds" "largest spread (fastest / slowest round) of a contender" "n/a" "<=" 1.25
    fi
}

cmp5_describe() {
    cat <<EOF
5. **Keyed holds vs a table semaphore**: $CLIENTS clients, each pgbench
   transaction one request and its release on a random semaphore of
   $KEYED_SEMS (\`n\` uniform in 1..$KEYED_SEMS, limit $KEYED_LIMIT each) for a random
   holder key of the client (\`'bench/c<client>/<h>'\`, \`h\` uniform in
   1..10^9), \`synchronous_commit = on\`. Both contenders commit twice per
   pgbench transaction, once for the request and once for the release.
   syncwf (bench/keyed_random.sql), 2 statements:
   \`SELECT status FROM sync_request('sem/bench/k' || n, holder)\`, then
   \`SELECT sync_release('sem/bench/k' || n, holder)\`; the request inserts
   the holder's \`sync_state\` row, the release deletes it, and the
   semaphore's limit comes from \`sync_limit\` (rows \`'bench/k<n>'\`).
   Plain SQL (bench/table_semaphore.sql, tables in bench/keyed_setup.sql),
   6 statements: \`BEGIN\`;
   \`SELECT pg_advisory_xact_lock(hashtext(name))\`; one \`SELECT\` of
   whether \`count(*)\` of the semaphore's rows in \`bench_sem(name, holder)\`
   (primary key (name, holder)) is below its limit in
   \`bench_sem_limit(name, sizelimit)\`; \`INSERT INTO bench_sem\` when it is
   (pgbench \`\\gset\` / \`\\if\`); \`COMMIT\`; then
   \`DELETE FROM bench_sem WHERE name = ... AND holder = ...\`. With $CLIENTS
   clients on $KEYED_SEMS semaphores of limit $KEYED_LIMIT a request almost always
   gets a slot; when it does not, syncwf queues it (pending) and the release
   withdraws it, and the table contender inserts nothing and deletes nothing.
   Before every round (and warm-up) of either contender, untimed,
   \`VACUUM bench_sem, sync_state\` and a \`CHECKPOINT\`, so that each round
   starts from the same table state at the same point of the checkpoint
   cycle: both tables take an insert and a delete per transaction, and
   without the VACUUM the table contender slowed round after round (6578,
   6477, 4268, 3835, 3950 tps in one full run) while its dead index
   entries piled up faster than autovacuum, which visits a database at most
   once a minute, removed them; without the CHECKPOINT, rounds just after
   one (full-page images for every page first touched) ran slower than
   those later in the cycle (6682, 6829, 8332, 8524, 5791 tps).
   Target: median tps syncwf / table at least 1.6, and each contender's
   rounds steady: fastest / slowest round at most 1.25.
EOF
}
