# shellcheck shell=bash
# bench/cmp/17_baseline.sh: comparison 17, workloads 1 and 4 against the
# build before memory grew with use.
#
# Workload 1's scripts (bench/syncwf_random.sql against
# bench/advisory_random.sql) mixed in one pgbench run (compare_mixed, the
# method of comparison 10), with 10 and then with $BASE_FILL live locks held
# by another session (workload 4), with this build, the baseline $BASELINE
# (fixed-size tables; built from git here and swapped in for the installed
# library), this build and the baseline again, each after a restart, so
# that none inherits the locks earlier comparisons cached.  A
# build's figure is the median of its two runs' syncwf mean latency over
# advisory's in the same run; the verdict compares the two builds' figures.
# Since those swing between runs by more than the target, each build's
# instructions per pair are counted too, as comparison 14 counts them
# (bench/lib/callgrind.sh), which do not swing.
# Target: this build at most 1.03 x the baseline, with 10 and with
# $BASE_FILL live locks, and in instructions per pair.
# Report: BASE_ROWS, its own section (cmp17_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

BASELINE=${BENCH_BASELINE:-6ca4848}
BASE_FILL=${BENCH_BASE_FILL:-1000000}
BASE_ROWS=()
declare -A BASE=()
declare -A BASE_CG=()

# base_use SO: install the library SO and restart the bench cluster
base_use() {
    install -m 755 "$1" "$("$PG_CONFIG" --pkglibdir)/syncwf.so"
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$BENCH_DIR/server.log" -w -t 120 -m fast restart >/dev/null ||
        die "the bench cluster did not restart, see $BENCH_DIR/server.log"
}

# base_fill N: a session (application_name bench_filler) takes N mutexes
# and stays; returns once they are held.  FILLER_HOLDS: the entries a run
# may leave, the filler's and those left before it
base_fill() {
    local n=$1 i before
    # (earlier comparisons may leave keyed holds: sync_state keeps them)
    before=$(q "SELECT count(*) FROM bench_entries()")
    as_pg env PGAPPNAME=bench_filler "${PSQL[@]}" -d "$DB" \
        -c "DO \$\$ BEGIN
              FOR b IN 0 .. ($n + 49) / 50 - 1 LOOP
                PERFORM sync_acquire(array(SELECT 'mtx/basefill/' || (b * 50 + i)
                                             FROM generate_series(1, least(50, $n - b * 50)) i));
              END LOOP;
            END \$\$" -c "SELECT pg_sleep(86400)" >"$LOGS/basefill.log" 2>&1 &
    FILLER_PID=$!
    for ((i = 0; i < 6000; i++)); do
        [[ $(q "SELECT count(*) FROM bench_entries() WHERE state = 'held' AND lock_name LIKE 'mtx/basefill/%'") == "$n" ]] && break
        kill -0 "$FILLER_PID" 2>/dev/null || die "the filler exited, see $LOGS/basefill.log"
        sleep 0.1
    done
    FILLER_HOLDS=$((before + n))
}

base_unfill() {
    local i
    q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'bench_filler'" >/dev/null
    wait "$FILLER_PID" 2>/dev/null || true
    FILLER_PID=
    for ((i = 0; i < 600; i++)); do
        [[ $(q "SELECT count(*) FROM bench_entries() WHERE state = 'held' AND lock_name LIKE 'mtx/basefill/%'") == 0 ]] && break
        sleep 0.1
    done
    FILLER_HOLDS=$(q "SELECT count(*) FROM bench_entries()")
}

# base_measure BUILD: the mixed runs with 10 and with BASE_FILL live locks
base_measure() {
    local build=$1 n
    for n in 10 "$BASE_FILL"; do
        base_fill "$n"
        compare_mixed "17-$build-$n" advisory "$ROOT/bench/advisory_random.sql" syncwf "$SW_RANDOM"
        base_unfill
        BASE[$build-$n]+="${COST[syncwf]} "
        log "comparison 17: $build, $n live locks: syncwf / advisory ${COST[syncwf]} (${MIX_US[syncwf]} / ${MIX_US[advisory]} us)"
        BASE_ROWS+=("| $build | $n | ${MIX_US[syncwf]} | ${MIX_US[advisory]} | ${COST[syncwf]} |")
    done
}

# base_cg BUILD: the installed build's instructions per pair, an existing
# and a new mutex, beyond the trivial pair (comparison 14's inline way)
base_cg() {
    local build=$1 dir=$BENCH_DIR/baseline/cg c
    for c in trivial syncwf_same syncwf_new; do
        BASE_CG[$build-$c]=$(cg_per_pair "$dir" "cg_inline_$c" "${BENCH_CALLGRIND_N:-1000}")
    done
    for c in syncwf_same syncwf_new; do
        BASE_CG[$build-$c]=$((BASE_CG[$build-$c] - BASE_CG[$build-trivial]))
    done
    log "comparison 17: $build, instructions per pair: existing mutex ${BASE_CG[$build-syncwf_same]}, new mutex ${BASE_CG[$build-syncwf_new]}"
}

cmp17_run() {
    local dir=$BENCH_DIR/baseline n cur base c
    if want 17 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 17: workloads 1 and 4 mixed with advisory locks, this build against $BASELINE, with 10 and $BASE_FILL live locks"
        rm -rf "$dir"
        mkdir -p "$dir/src"
        git -C "$ROOT" archive "$BASELINE" | tar -x -C "$dir/src" ||
            die "comparison 17: cannot read commit $BASELINE"
        make -C "$dir/src" PG_CONFIG="$PG_CONFIG" -j"$(nproc)" >"$LOGS/baseline-build.log" 2>&1 ||
            die "comparison 17: the baseline does not build, see $LOGS/baseline-build.log"
        cp "$("$PG_CONFIG" --pkglibdir)/syncwf.so" "$dir/current.so"
        cg_init "$dir/cg"       # (CREATE EXTENSION needs this build's library)
        base_cg current
        base_use "$dir/current.so"
        base_measure current
        base_use "$dir/src/syncwf.so"
        base_cg baseline
        base_measure baseline
        base_use "$dir/current.so"
        base_measure current
        base_use "$dir/src/syncwf.so"
        base_measure baseline
        base_use "$dir/current.so"
        for n in 10 "$BASE_FILL"; do
            cur=$(median_fmt '%.3f' ${BASE[current-$n]})
            base=$(median_fmt '%.3f' ${BASE[baseline-$n]})
            add_summary "17. vs $BASELINE, $n live" "mean latency syncwf / advisory in one pgbench run, this build / the baseline (${cur} / ${base})" \
                "$(ratio "$cur" "$base")" "<=" 1.03
        done
        add_summary "17. vs $BASELINE, CPU, existing lock" "instructions per pair as in 14, this build / the baseline (${BASE_CG[current-syncwf_same]} / ${BASE_CG[baseline-syncwf_same]})" \
            "$(ratio "${BASE_CG[current-syncwf_same]}" "${BASE_CG[baseline-syncwf_same]}")" "<=" 1.03
        add_summary "17. vs $BASELINE, CPU, new lock" "the same with a new lock every pair (${BASE_CG[current-syncwf_new]} / ${BASE_CG[baseline-syncwf_new]})" \
            "$(ratio "${BASE_CG[current-syncwf_new]}" "${BASE_CG[baseline-syncwf_new]}")" "<=" 1.03
    else
        for n in 10 "$BASE_FILL"; do
            add_summary "17. vs $BASELINE, $n live" "mean latency syncwf / advisory in one pgbench run, this build / the baseline" "n/a" "<=" 1.03
        done
        add_summary "17. vs $BASELINE, CPU, existing lock" "instructions per pair as in 14, this build / the baseline" "n/a" "<=" 1.03
        add_summary "17. vs $BASELINE, CPU, new lock" "the same with a new lock every pair" "n/a" "<=" 1.03
    fi
}

cmp17_describe() {
    cat <<EOF
17. **No slower than before**: workload 1 (\`bench/syncwf_random.sql\`
   against \`bench/advisory_random.sql\`) mixed in one pgbench run, the
   method of comparison 10, while another session holds 10 and then
   $BASE_FILL mutexes (workload 4). A build's figure is syncwf's mean
   latency over advisory's in the same run, the median of $BENCH_ROUNDS
   rounds. This build is measured, then the baseline $BASELINE (the last
   build with fixed-size tables: built from git, its library swapped in),
   then each again, every time in a freshly restarted cluster so that none
   inherits what comparisons 1 to 16 left; a build's figure is the median
   of its two. These figures move between runs by more than the target, so
   each build's instructions per acquire+release pair are counted too, the
   way comparison 14 counts them (inline, beyond the trivial pair), which
   do not move. Targets: this build at most 1.03 x the baseline, with 10
   and with $BASE_FILL live locks, and in instructions per pair.
   Code: bench/cmp/17_baseline.sh.
EOF
}

cmp17_details() {
    ((${#BASE_ROWS[@]})) || return 0
    cat <<EOF

### 17. This build against $BASELINE

| build | live locks | syncwf (mean latency, us) | advisory (us) | syncwf / advisory |
| --- | --- | --- | --- | --- |
EOF
    printf '%s\n' "${BASE_ROWS[@]}"
    [[ -n ${BASE_CG[baseline-syncwf_same]:-} ]] || return 0
    cat <<EOF

| build | instructions per pair, existing mutex | new mutex each pair |
| --- | --- | --- |
| current | ${BASE_CG[current-syncwf_same]} | ${BASE_CG[current-syncwf_new]} |
| baseline | ${BASE_CG[baseline-syncwf_same]} | ${BASE_CG[baseline-syncwf_new]} |
EOF
}
