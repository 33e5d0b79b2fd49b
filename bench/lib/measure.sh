# shellcheck shell=bash
# bench/lib/measure.sh:
# pgbench runs and their figures, for scripts/bench.sh (sourced
# by it, never run).
#
# run_pgbench, query_latency, pgbench_txlog   one pgbench run each
# compare_ab          interleaved rounds of two contenders (MED_A, MED_B)
# compare_mixed       contenders mixed in one pgbench run (COST, MIX_US)
# median, median_fmt, spread, ratio, verdict, since   figures
# add_summary         a row of the report's summary table (SUMMARY, MISSES)
# ROUND_ROWS          rows of the report's per-round table
# SW_RANDOM, SW_HOT   workload 1's and 2's syncwf scripts ("-": not run)

# run_pgbench LABEL SCRIPT SECONDS: prints the tps (excluding connection time).
# PGBENCH_PGOPTIONS, if set, is passed to the clients as PGOPTIONS.
# PGBENCH_FAIL_QUERY, if set, is run when pgbench fails, and its output
# added to the pgbench log (the state the failure left, before the cluster
# stops).
PGBENCH_PGOPTIONS=
PGBENCH_FAIL_QUERY=
# ROUND_VACUUM: tables to VACUUM (untimed) before each run, then a
# CHECKPOINT, so that every round of every contender starts from the same
# table state at the same point of the checkpoint cycle: without the VACUUM
# a contender whose table churns (insert and delete per transaction) slows
# round after round until autovacuum, which runs at most once a minute per
# database, catches up; without the CHECKPOINT the rounds right after one
# write a full-page image for every page they touch first and run slower
# than the rounds later in the cycle (6682 / 6829 / 8332 / 8524 / 5791 tps).
ROUND_VACUUM=
# shellcheck disable=SC2153  # CLIENTS and THREADS are scripts/bench.sh's
run_pgbench() {
    local label=$1 script=$2 secs=$3 out rc tps failed
    out=$LOGS/pgbench-$label.log
    wait_idle
    if [[ -n $ROUND_VACUUM ]]; then
        q "VACUUM $ROUND_VACUUM" >/dev/null
        q "CHECKPOINT" >/dev/null
    fi
    rc=0
    as_pg ${PGBENCH_PGOPTIONS:+"PGOPTIONS=$PGBENCH_PGOPTIONS"} timeout --signal=INT --kill-after=30 $((secs + 60)) \
        "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -U postgres \
        -n -M prepared -c "$CLIENTS" -j "$THREADS" -T "$secs" -f "$script" "$DB" \
        >"$out" 2>&1 || rc=$?
    if ((rc == 124 || rc == 137)); then
        die "pgbench $label did not finish within $((secs + 60)) s (hang?): see $out and $BENCH_DIR/server.log"
    fi
    if ((rc != 0)) && [[ -n $PGBENCH_FAIL_QUERY ]]; then
        { echo "-- after the failure: $PGBENCH_FAIL_QUERY"; q "$PGBENCH_FAIL_QUERY" 2>&1; } >>"$out"
    fi
    ((rc == 0)) || die "pgbench $label failed (exit $rc): $(grep -m3 -iE 'error|abort' "$out" | tr '\n' ' ') -- see $out"
    failed=$(awk -F'[: ]+' '/^number of failed transactions/ {print $5}' "$out")
    [[ -z $failed || $failed == 0 ]] || die "pgbench $label: $failed failed transactions, see $out"
    tps=$(awk '/^tps = / && /without initial connection time/ {print $3}' "$out")
    [[ -n $tps ]] || die "pgbench $label: no tps line in $out"
    printf '%.0f\n' "$tps"
}

# query_latency NAME SQL: average latency of SQL, one client, prepared,
# 3 s, in microseconds (pgbench's figure: the round trip included)
query_latency() {
    local name=$1 sql=$2 out=$LOGS/pgbench-views-$1.log script=$BENCH_DIR/views-$1.sql lat
    echo "$sql;" >"$script"
    chmod 644 "$script"
    wait_idle
    as_pg "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -U postgres -n -M prepared -c 1 -T 3 \
        -f "$script" "$DB" >"$out" 2>&1 || die "pgbench of $name failed, see $out"
    lat=$(awk '/^latency average = / {print $4}' "$out")
    [[ -n $lat ]] || die "pgbench of $name: no latency line in $out"
    awk -v ms="$lat" 'BEGIN {printf "%.1f\n", ms * 1000}'
}

spread() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 {min = $1} {max = $1} END {printf "%.2f\n", max / min}'; }
# median_fmt FORMAT VALUE...: the median, printed with FORMAT (printf's)
median_fmt() {
    local fmt=$1
    shift
    printf '%s\n' "$@" | sort -g | awk -v fmt="$fmt\n" '{a[NR] = $1}
        END { printf fmt, (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
median() { median_fmt '%.0f' "$@"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.2f\n", a / b }'; }
# verdict VALUE OP TARGET -> PASS or MISS
verdict() {
    awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN {
        ok = (op == ">=") ? (v + 0 >= t + 0) : (v + 0 <= t + 0);
        print (v == "inf" || v == "n/a") ? "MISS" : (ok ? "PASS" : "MISS") }'
}

SUMMARY=()     # rows of the summary table
ROUND_ROWS=()  # rows of the per-round table
MISSES=0
add_summary() {  # comparison, figure, value, op, target (op "info": no target)
    local v
    if [[ $3 == n/a ]]; then v="n/a (not run)"
    elif [[ $4 == info ]]; then v="for information"
    elif [[ $5 == n/a ]]; then v="n/a (its reference was not run)"
    else v=$(verdict "$3" "$4" "$5"); fi
    [[ $v == MISS ]] && MISSES=$((MISSES + 1))
    SUMMARY+=("| $1 | $2 | $3 | $4 $5 | $v |")
}

# compare_ab NAME LABEL_A SCRIPT_A LABEL_B SCRIPT_B: interleaved rounds;
# sets MED_A and MED_B.
compare_ab() {
    local name=$1 la=$2 sa=$3 lb=$4 sb=$5 r ta tb
    local -a A=() B=()
    if ((BENCH_WARMUP > 0)); then
        [[ $sa != - ]] && run_pgbench "$name-warmup-$la" "$sa" "$BENCH_WARMUP" >/dev/null
        run_pgbench "$name-warmup-$lb" "$sb" "$BENCH_WARMUP" >/dev/null
    fi
    for ((r = 1; r <= BENCH_ROUNDS; r++)); do
        if [[ $sa != - ]]; then
            ta=$(run_pgbench "$name-$la-$r" "$sa" "$BENCH_SECONDS")
            check_no_syncwf_leftovers
            A+=("$ta")
            log "$name round $r: $la $ta tps"
        fi
        tb=$(run_pgbench "$name-$lb-$r" "$sb" "$BENCH_SECONDS")
        B+=("$tb")
        log "$name round $r: $lb $tb tps"
    done
    if [[ $sa != - ]]; then
        MED_A=$(median "${A[@]}") SPREAD_A=$(spread "${A[@]}")
        ROUND_ROWS+=("| $name | $la | $(IFS='|'; echo "${A[*]}" | sed 's/|/ \/ /g') | $MED_A | $SPREAD_A |")
    else
        MED_A=n/a SPREAD_A=n/a
    fi
    MED_B=$(median "${B[@]}") SPREAD_B=$(spread "${B[@]}")
    ROUND_ROWS+=("| $name | $lb | $(IFS='|'; echo "${B[*]}" | sed 's/|/ \/ /g') | $MED_B | $SPREAD_B |")
}

# shellcheck disable=SC2034  # used by the comparisons
{
    SW_RANDOM=$ROOT/bench/syncwf_random.sql
    SW_HOT=$ROOT/bench/syncwf_hot.sql
    if [[ $BENCH_SKIP_SYNCWF == 1 ]]; then SW_RANDOM=-; SW_HOT=-; fi
}

# elapsed seconds since a date +%s.%N stamp, one decimal
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }'; }

# pgbench_txlog LABEL SECS CLIENTS THREADS PGBENCH-ARGS...: one pgbench run
# with a transaction log (-l); leaves its transactions as lines "script_no
# latency_us" in the file $TXLOG.  A failed transaction fails the run.
TXLOG=
pgbench_txlog() {
    local label=$1 secs=$2 clients=$3 threads=$4 rc=0
    shift 4
    local prefix=$BENCH_DIR/txlog/$label out=$LOGS/pgbench-$label.log
    # pgbench writes its transaction logs as the server's OS user
    mkdir -p "$BENCH_DIR/txlog"
    is_root && chown "$OS_USER:" "$BENCH_DIR/txlog"
    # (the extract is named so that the logs' glob never takes it in)
    rm -f "$prefix".* "$prefix-lat"
    wait_idle
    as_pg timeout --signal=INT --kill-after=30 $((secs + 60)) \
        "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -U postgres -n -M prepared \
        -c "$clients" -j "$threads" -T "$secs" -l --log-prefix="$prefix" \
        "$@" "$DB" >"$out" 2>&1 || rc=$?
    ((rc == 0)) || die "pgbench $label failed (exit $rc): see $out"
    check_no_syncwf_leftovers
    # client transaction_no latency_us script_no ...; a failed transaction
    # has no latency
    cat "$prefix".* | awk '$3 !~ /^[0-9]+$/ { bad++; next } { print $4, $3 }
        END { exit (bad > 0) }' >"$prefix-lat" ||
        die "pgbench $label: failed transactions (see $out)"
    rm -f "$prefix".*
    TXLOG=$prefix-lat
}

# compare_mixed NAME LABEL SCRIPT [LABEL SCRIPT ...]: rounds of ONE pgbench
# run that picks a contender's script at random for every transaction, so
# all contenders meet the same machine at the same moment; one client (and
# thread) per CPU, so that a transaction's latency is its own cost and not
# time spent queued behind the others' transactions, which would pull every
# ratio towards 1.  Per round, each contender's mean latency (from
# pgbench's transaction log) over the first one's; sets COST[label] to the
# median of those ratios over the rounds (the first label's is 1).
declare -A COST=() MIX_US=()
compare_mixed() {
    local name=$1 r i
    shift
    local -a labels=() args=()
    while (($# >= 2)); do labels+=("$1"); args+=(-f "$2@1"); shift 2; done
    local n=${#labels[@]} clients
    clients=$(nproc)
    local -A ratios=() means=()
    for ((r = 0; r <= BENCH_ROUNDS; r++)); do
        if ((r == 0)); then
            ((BENCH_WARMUP > 0)) || continue
            pgbench_txlog "$name-warmup" "$BENCH_WARMUP" "$clients" "$clients" "${args[@]}"
            rm -f "$TXLOG"
            continue
        fi
        pgbench_txlog "$name-$r" "$BENCH_SECONDS" "$clients" "$clients" "${args[@]}"
        local line
        line=$(awk -v n="$n" '{ sum[$1] += $2; cnt[$1]++ }
            END {
                for (i = 0; i < n; i++) {
                    if (!cnt[i]) { print "missing " i; exit }
                    printf "%.3f %d ", sum[i] / cnt[i], cnt[i]
                }
                print ""
            }' "$TXLOG")
        rm -f "$TXLOG"
        [[ $line == missing* ]] && die "pgbench $name-$r: $line (see $LOGS/pgbench-$name-$r.log)"
        local -a f=($line)
        for ((i = 0; i < n; i++)); do
            means[${labels[$i]}]+="${f[$((2 * i))]} "
            ratios[${labels[$i]}]+="$(awk -v a="${f[$((2 * i))]}" -v b="${f[0]}" 'BEGIN {printf "%.3f", a / b}') "
        done
        log "$name round $r: $(for ((i = 0; i < n; i++)); do printf '%s %s us (%s tx)  ' "${labels[$i]}" "${f[$((2 * i))]}" "${f[$((2 * i + 1))]}"; done)"
    done
    for i in "${!labels[@]}"; do
        local -a A=(${ratios[${labels[$i]}]}) M=(${means[${labels[$i]}]})
        # shellcheck disable=SC2034  # read by the comparisons
        COST[${labels[$i]}]=$(median_fmt '%.2f' "${A[@]}")
        MIX_US[${labels[$i]}]=$(median_fmt '%.1f' "${M[@]}")
        ROUND_ROWS+=("| $name | ${labels[$i]} (mean latency, us) | $(IFS='|'; echo "${M[*]}" | sed 's/|/ \/ /g') | ${MIX_US[${labels[$i]}]} | cost ratios $(IFS='|'; echo "${A[*]}" | sed 's/|/ \/ /g') |")
    done
}
