# shellcheck shell=bash
# bench/cmp/14_callgrind.sh: comparison 14, server instructions per call.
#
# Deterministic where the throughput comparisons are not: a stand-alone
# backend (postgres --single) under valgrind's callgrind runs N and 3N
# pairs of prepared statements, and the marginal instructions per pair are
# compared (bench/lib/callgrind.sh). Contenders: an existing session mutex
# against one advisory lock; a new lock every pair against a new advisory
# key every pair, each counted beyond a trivial pair, three ways: all the
# pairs in one statement (the calls' own cost: the targets), and as two
# prepared statements, in one transaction or each in its own (for
# information); a keyed request and release against the table semaphore
# of comparison 5, each statement its own transaction; and, inline, for
# information, an existing semaphore under a parent row (nested limits)
# against an existing semaphore of its own row.
# Targets: existing lock at most 2.0 x advisory, new lock at most 3.0 x,
# keyed at most 1.0 x the table semaphore.
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

CG_N=${BENCH_CALLGRIND_N:-1000}
declare -A CG=()

cmp14_run() {
    local dir="$BENCH_DIR/callgrind" c m
    if want 14 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 14: instructions per pair under callgrind, stand-alone backend, $CG_N and $((3 * CG_N)) pairs"
        cg_init "$dir"
        for m in together apart inline; do
            for c in trivial advisory_same syncwf_same advisory_new syncwf_new; do
                if [[ $m == inline ]]; then
                    CG[$c-$m]=$(cg_per_pair "$dir" "cg_inline_$c" "$CG_N")
                else
                    CG[$c-$m]=$(cg_per_pair "$dir" "cg_$c" "$CG_N" "$m")
                fi
                log "comparison 14: $c, pairs $m, ${CG[$c-$m]} instructions per pair"
            done
            for c in advisory_same syncwf_same advisory_new syncwf_new; do
                CG[$c-$m-net]=$((CG[$c-$m] - CG[trivial-$m]))
            done
        done
        for c in table keyed; do
            CG[$c]=$(cg_per_pair "$dir" "cg_$c" "$CG_N" apart)
            log "comparison 14: $c ${CG[$c]} instructions per pair"
        done
        for c in sem_same nested_same; do
            CG[$c-inline]=$(cg_per_pair "$dir" "cg_inline_$c" "$CG_N")
            CG[$c-inline-net]=$((CG[$c-inline] - CG[trivial-inline]))
            log "comparison 14: $c, pairs inline, ${CG[$c-inline]} instructions per pair"
        done
        add_summary "14. CPU, existing lock" "instructions per acquire+release pair, the calls' own (pairs in one statement, beyond the trivial pair's), syncwf / advisory (${CG[syncwf_same-inline-net]} / ${CG[advisory_same-inline-net]})" \
            "$(ratio "${CG[syncwf_same-inline-net]}" "${CG[advisory_same-inline-net]}")" "<=" 2.0
        add_summary "14. CPU, new lock" "the same with a new lock every pair (${CG[syncwf_new-inline-net]} / ${CG[advisory_new-inline-net]})" \
            "$(ratio "${CG[syncwf_new-inline-net]}" "${CG[advisory_new-inline-net]}")" "<=" 3.0
        add_summary "14. CPU, existing lock, statements" "the pair as two prepared statements in one transaction, beyond SELECT 1 + \$1's (${CG[syncwf_same-together-net]} / ${CG[advisory_same-together-net]})" \
            "$(ratio "${CG[syncwf_same-together-net]}" "${CG[advisory_same-together-net]}")" info ""
        add_summary "14. CPU, existing lock, pgbench-shaped" "each statement its own transaction, as pgbench runs them (${CG[syncwf_same-apart-net]} / ${CG[advisory_same-apart-net]})" \
            "$(ratio "${CG[syncwf_same-apart-net]}" "${CG[advisory_same-apart-net]}")" info ""
        add_summary "14. CPU, keyed" "instructions per keyed request+release, syncwf / table semaphore (${CG[keyed]} / ${CG[table]}), statements included" \
            "$(ratio "${CG[keyed]}" "${CG[table]}")" "<=" 1.0
        add_summary "14. CPU, nested semaphore" "instructions per acquire+release pair of an existing semaphore whose limit comes with a parent row, the calls' own as for the existing lock, nested / plain semaphore (${CG[nested_same-inline-net]} / ${CG[sem_same-inline-net]})" \
            "$(ratio "${CG[nested_same-inline-net]}" "${CG[sem_same-inline-net]}")" info ""
    else
        add_summary "14. CPU, existing lock" "instructions per acquire+release pair, the calls' own, syncwf / advisory" "n/a" "<=" 2.0
        add_summary "14. CPU, new lock" "the same with a new lock every pair" "n/a" "<=" 3.0
        add_summary "14. CPU, existing lock, statements" "the pair as two prepared statements in one transaction" "n/a" info ""
        add_summary "14. CPU, existing lock, pgbench-shaped" "each statement its own transaction" "n/a" info ""
        add_summary "14. CPU, keyed" "instructions per keyed request+release, syncwf / table semaphore" "n/a" "<=" 1.0
        add_summary "14. CPU, nested semaphore" "instructions per acquire+release pair of an existing semaphore whose limit comes with a parent row, nested / plain semaphore" "n/a" info ""
    fi
}

cmp14_describe() {
    cat <<EOF
14. **CPU per call**: instructions, counted by valgrind's callgrind, of a
   stand-alone backend (\`postgres --single\`, syncwf preloaded) that runs
   $CG_N and then $((3 * CG_N)) pairs of calls; a contender's
   figure is the marginal cost per pair, (I($((3 * CG_N))) - I($CG_N)) /
   $((2 * CG_N)), which leaves out start-up and first uses. Unlike
   throughput, it does not move between runs. Contenders:
   \`sync_acquire('mtx/b/x')\` + \`sync_release\` of one existing session
   mutex against \`pg_advisory_lock(42)\` + \`pg_advisory_unlock\`, and the
   same with a new name (a new key) every pair, each counted beyond a
   trivial pair, three ways. Inline, the targets: all the pairs in one
   statement, \`SELECT count(*) FROM (SELECT sync_acquire(...),
   sync_release(...) FROM generate_series(1, n) ...)\` against
   \`SELECT 1 + g, 2 + g\`, the calls' own cost with no statement, plan
   or transaction around each pair (the new-lock names are built with
   \`||\` there). As two prepared statements (\`EXECUTE a(...)\`,
   \`EXECUTE r(...)\`) against two of \`SELECT 1 + \$1\`, in one
   transaction or each statement in its own, as pgbench runs them: for
   information, since there the end of a statement that holds an advisory
   lock costs PostgreSQL itself several thousand instructions, which hides
   the difference in the calls. And a
   keyed \`sync_request\` + \`sync_release\` (semaphores
   \`sem/bench/k1..k1000\` of limit 2, a new holder key every pair, each
   statement its own transaction) against comparison 5's table semaphore
   (its count and insert in one statement, one fewer than the pgbench
   script), statements included. For information, inline too: one
   existing semaphore of limit 1 whose limit comes from the pattern row
   \`'benchn/*'\`, which names the parent row \`'benchnp/all'\` of
   sizelimit 1000000 (1.8's nested limits: \`sync_acquire('sem/benchn/1')\`
   + \`sync_release\`), against one of limit 1 from a row of its own
   (\`'sem/bench/1'\`), each beyond the trivial pair: what counting and
   checking at the parent costs per pair. A stand-alone backend prints
   every result row as debug output, the same work for every contender.
   Targets, inline: existing lock at most 2.0 x advisory's instructions,
   new lock at most 3.0 x; keyed at most the table's.
   Code: bench/cmp/14_callgrind.sh, bench/lib/callgrind.sh.
EOF
}

cmp14_details() {
    local c m how
    [[ -n ${CG[trivial-together]:-} ]] || return 0
    local -A label=(
        [trivial]="\`SELECT 1 + \$1\`, twice"
        [advisory_same]="\`pg_advisory_lock\` + \`pg_advisory_unlock\`, one key"
        [syncwf_same]="\`sync_acquire\` + \`sync_release\`, one existing mutex"
        [advisory_new]="\`pg_advisory_lock\` + \`pg_advisory_unlock\`, a new key each pair"
        [syncwf_new]="\`sync_acquire\` + \`sync_release\`, a new mutex each pair")
    cat <<EOF

### 14. Instructions per pair

| contender | transactions | instructions per pair | beyond \`SELECT 1 + \$1\` |
| --- | --- | --- | --- |
EOF
    for m in together apart inline; do
        how="one per pair"
        [[ $m == apart ]] && how="one per statement"
        [[ $m == inline ]] && how="one for all pairs"
        for c in trivial advisory_same syncwf_same advisory_new syncwf_new; do
            echo "| ${label[$c]} | $how | ${CG[$c-$m]} | ${CG[$c-$m-net]:--} |"
        done
    done
    cat <<EOF
| table semaphore: request (4 statements) + release | two per pair | ${CG[table]} | $((CG[table] - CG[trivial-apart])) |
| keyed \`sync_request\` + \`sync_release\` | one per statement | ${CG[keyed]} | $((CG[keyed] - CG[trivial-apart])) |
| \`sync_acquire\` + \`sync_release\`, one existing semaphore of limit 1, its own row | one for all pairs | ${CG[sem_same-inline]} | ${CG[sem_same-inline-net]} |
| \`sync_acquire\` + \`sync_release\`, one existing semaphore of limit 1 under a parent row | one for all pairs | ${CG[nested_same-inline]} | ${CG[nested_same-inline-net]} |
EOF
}
