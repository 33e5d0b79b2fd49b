# shellcheck shell=bash
# bench/cmp/10_capacity.sh: comparison 10, the capacity model on random names.
#
# Workload 1's plain acquire against weighted, shared, pattern and nested
# acquires, plus a calibration contender of known extra cost, all mixed
# in one pgbench run per round (compare_mixed): bench/syncwf_random.sql,
# syncwf_weighted.sql, syncwf_shared.sql, syncwf_pattern.sql,
# syncwf_nested.sql, syncwf_calibration.sql.
# Target: each variant's mean latency at most 1.1 x the plain acquire's.
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

# the lock table now, for the log
cmp10_locks() {
    q "SELECT locks || ' locks, ' || cached_locks || ' of them cached' FROM sync_memory"
}

cmp10_run() {
    if want 10 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 10: plain, weighted, shared, pattern, nested and calibration acquires on random names, mixed in one pgbench run, $(nproc) clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
        # every lock the rounds use (the semaphores of the four namespaces
        # and the shared contender's mutexes) cached first, alike: the rounds
        # measure the steady state, not which contender met a name first.
        # One session holds them all at once, then releases them: cached
        # locks give up their room to a new lock while they outnumber the
        # live ones and 100,000, so taken one after the other they would
        # leave only about 100,000 cached, and the rounds would read most
        # rows again (unless comparison 4's million locks made room before)
        local sql="" ns
        for ns in sem/bench sem/benchw sem/benchp sem/benchn mtx/bench; do
            sql+="SELECT count(sync_acquire('$ns/' || g)) FROM generate_series(1, $NAMES) g; "
        done
        q "$sql SELECT sync_release_all()" >/dev/null
        log "comparison 10: lock table before the rounds: $(cmp10_locks)"
        compare_mixed "10-capacity" plain "$SW_RANDOM" weighted "$ROOT/bench/syncwf_weighted.sql" \
            shared "$ROOT/bench/syncwf_shared.sql" pattern "$ROOT/bench/syncwf_pattern.sql" \
            nested "$ROOT/bench/syncwf_nested.sql" calibration "$ROOT/bench/syncwf_calibration.sql"
        log "comparison 10: lock table after the rounds: $(cmp10_locks)"
        for c in weighted shared pattern nested; do
            add_summary "10. $c acquire" "median over rounds of mean latency $c / plain in the same pgbench run (${MIX_US[$c]} / ${MIX_US[plain]} us): cost at most 1.1 x the plain acquire" \
                "${COST[$c]}" "<=" 1.10
        done
        add_summary "10. calibration" "the same ratio for the plain acquire plus a known extra cost (bench/syncwf_calibration.sql, ${MIX_US[calibration]} us): how big a difference the method shows" \
            "${COST[calibration]}" info ''
    else
        for c in weighted shared pattern nested; do
            add_summary "10. $c acquire" "median over rounds of mean latency $c / plain: cost at most 1.1 x the plain acquire" "n/a" "<=" 1.10
        done
    fi
}

cmp10_describe() {
    cat <<EOF
10. **The capacity model on random names**: workload 1's plain acquire and
   release (\`plain\`, bench/syncwf_random.sql) against four variants:
   \`weighted\` takes 3 of the 4 slots
   of a random semaphore among $NAMES (\`sync_acquire('sem/benchw/' || n,
   slots => 3)\`, rows \`'benchw/<n>'\` of limit 4,
   bench/syncwf_weighted.sql); \`shared\` a shared hold of a random mutex
   (\`sync_acquire('mtx/bench/' || n, mode => 'shared')\`,
   bench/syncwf_shared.sql); \`pattern\` a random semaphore whose limit 1
   comes from the pattern row \`'benchp/*'\` instead of a row of its own
   (bench/syncwf_pattern.sql); \`nested\` (1.8) a random semaphore whose
   limit 1 comes from the pattern row \`'benchn/*'\`, which names the
   parent row \`'benchnp/all'\` of sizelimit 1000000: every grant and
   release also counts at the parent, which never refuses, so what it
   measures is the cost of counting and checking at the second level
   (bench/syncwf_nested.sql). Before the rounds, one session acquires
   every semaphore of the four namespaces and every mutex of \`shared\`,
   all held at once, then releases them, so that each stays cached with
   its limit (a pattern's or its own row's, and its parent) and the rounds
   compare the steady state: taken one after the other, they would leave
   only about 100,000 cached, since cached locks give up their room to a
   new lock while they outnumber the live ones and 100,000.
   These contenders differ by a few percent at most, less than the
   machine's noise between two runs of ${BENCH_SECONDS} s (see the spread of
   comparisons 1, 2, 5 and 8 below). So all of them share **one** pgbench
   run, which picks a contender's script at random for every transaction
   (\`-f <script>@1\` for each): every contender meets the same machine at
   the same moment. The run has one client and one thread per CPU ($(nproc)
   here), so that a transaction's latency is its own cost rather than time
   spent queued behind other transactions, which would pull every ratio
   towards 1. Each contender's figure is its mean latency, from pgbench's
   transaction log (\`-l\`), over \`plain\`'s in the same round; the
   verdict is on the median of $BENCH_ROUNDS rounds of ${BENCH_SECONDS} s. A sixth
   contender, \`calibration\`, is the plain acquire plus an md5 over
   ~1.5 kB in the same statement (bench/syncwf_calibration.sql): its ratio,
   for information, shows how large a difference the method reports, and
   its rounds how steady that is. Target for each contender: cost at most
   1.1 x the plain acquire's.
EOF
}
