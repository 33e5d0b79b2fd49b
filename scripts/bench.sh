#!/usr/bin/env bash
# scripts/bench.sh: syncwf benchmark, run by `make bench`.
#
# Builds and installs the extension, starts a throwaway cluster in .bench/
# (unix socket only, inside .bench/), and compares syncwf with PostgreSQL's
# advisory locks under pgbench.  Contenders are interleaved within the run
# (A, B, A, B, ...) so machine noise hits both; the median of each contender
# is reported.  The results table is printed and written to
# docs/benchmarks.md; every figure in that file comes from this run.
#
# Environment:
#   BENCH_SECONDS      duration of each pgbench run (default 10)
#   BENCH_ROUNDS       rounds per contender in comparisons 1 and 2 (default 5)
#   BENCH_FULL_ORDER   order of empty/full rounds in comparison 4 (default
#                      "E F E F E F E F"); every F after an E refills
#                      1,000,000 locks (a few seconds each)
#   BENCH_HANDOFFS     iterations per session in comparison 3 (default 1001,
#                      i.e. 2001 hand-offs per round)
#   BENCH_LAT_ROUNDS   rounds per lock in comparison 3, interleaved (default 3)
#   BENCH_WARMUP       seconds of unrecorded warm-up per contender (default 2)
#   BENCH_SKIP_SYNCWF  1: do not build or load syncwf; run only the advisory
#                      contenders (to test this script); the report goes to
#                      .bench/benchmarks.md instead of docs/
#   BENCH_SKIP_BUILD   1: do not build; benchmark the syncwf already installed
#                      (the report says so)
#   BENCH_OUT          where to write the report (default docs/benchmarks.md)
#   BENCH_STRICT       1: exit 1 when a target is missed (default: report only)
#   PG_CONFIG          pg_config of the PostgreSQL to build against
#   SYNCWF_PG_USER     OS user the cluster runs as when we are root (postgres)
#
# Exit status: 0 when the run completed (targets may be missed, see the
# report), non-zero when something failed; the logs stay in .bench/.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

BENCH_SECONDS=${BENCH_SECONDS:-10}
BENCH_ROUNDS=${BENCH_ROUNDS:-5}
BENCH_FULL_ORDER=${BENCH_FULL_ORDER:-"E F E F E F E F"}
BENCH_HANDOFFS=${BENCH_HANDOFFS:-1001}
BENCH_LAT_ROUNDS=${BENCH_LAT_ROUNDS:-3}
BENCH_WARMUP=${BENCH_WARMUP:-2}
BENCH_SKIP_SYNCWF=${BENCH_SKIP_SYNCWF:-0}
BENCH_STRICT=${BENCH_STRICT:-0}
if [[ $BENCH_SKIP_SYNCWF == 1 ]]; then
    BENCH_OUT=${BENCH_OUT:-$ROOT/.bench/benchmarks.md}
else
    BENCH_OUT=${BENCH_OUT:-$ROOT/docs/benchmarks.md}
fi

CLIENTS=8
THREADS=2
NAMES=100000          # sync_limit rows bench/1..bench/N, range of random keys
FILL=1000000          # live locks held by the filler in comparison 4
MAX_LOCKS=1100000
MAX_ENTRIES=1200000

die() { printf '[bench] ERROR: %s\n' "$*" >&2; exit 1; }
for v in BENCH_SECONDS BENCH_ROUNDS BENCH_HANDOFFS BENCH_LAT_ROUNDS BENCH_WARMUP; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer"
done
((BENCH_SECONDS > 0 && BENCH_ROUNDS > 0 && BENCH_LAT_ROUNDS > 0 && BENCH_HANDOFFS > 1)) ||
    die "BENCH_SECONDS, BENCH_ROUNDS, BENCH_LAT_ROUNDS must be > 0 and BENCH_HANDOFFS > 1"

T0=$SECONDS
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# --- packages, the unprivileged user, build and install ---------------------
# scripts/common.sh (shared with setup.sh and test.sh) provides
# ensure_packages, ensure_pg_user (PG_OS_USER, SYNCWF_PG_USER to change),
# as_pg (run as that user when we are root), load_pg_paths (PG_BINDIR) and
# build_and_install (clean build with -Werror, then make install).

# shellcheck source=scripts/common.sh
source "$ROOT/scripts/common.sh"
# our own log/die (common.sh has its own), defined after sourcing it
log() { printf '[bench %s +%ss] %s\n' "$(date +%H:%M:%S)" "$((SECONDS - T0))" "$*" >&2; }
die() { printf '[bench] ERROR: %s\n' "$*" >&2; exit 1; }

ensure_packages
ensure_pg_user
command -v "$PG_CONFIG" >/dev/null 2>&1 || die "$PG_CONFIG not found"
load_pg_paths
PGBIN=$PG_BINDIR
OS_USER=$PG_OS_USER
for b in initdb pg_ctl postgres psql pgbench; do
    [[ -x $PGBIN/$b ]] || die "$PGBIN/$b missing"
done

# the source that was built: HEAD now, and the last commit that touched it
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "no commit")
SRC_COMMIT=$(git -C "$ROOT" log -1 --format=%h -- src syncwf--1.0.sql Makefile 2>/dev/null || true)
[[ -n $SRC_COMMIT && $SRC_COMMIT != "${COMMIT}" ]] && COMMIT="$COMMIT (engine source last changed in $SRC_COMMIT)"
DIRTY=$(git -C "$ROOT" status --porcelain -- src syncwf--1.0.sql Makefile 2>/dev/null | head -1)
[[ -n $DIRTY ]] && COMMIT="$COMMIT, with uncommitted changes in src/, syncwf--1.0.sql or Makefile"
[[ ${BENCH_SKIP_BUILD:-0} == 1 ]] && COMMIT="installed build, not rebuilt by this run (BENCH_SKIP_BUILD=1); tree at $COMMIT"

if [[ $BENCH_SKIP_SYNCWF != 1 && ${BENCH_SKIP_BUILD:-0} == 1 ]]; then
    log "BENCH_SKIP_BUILD=1: using the syncwf already installed in $("$PG_CONFIG" --pkglibdir)"
elif [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
    log "building and installing syncwf"
    build_and_install >&2
else
    log "BENCH_SKIP_SYNCWF=1: syncwf is neither built nor loaded; advisory contenders only"
fi

# --- throwaway cluster -------------------------------------------------------

BENCH_DIR=$ROOT/.bench
DATA=$BENCH_DIR/data
SOCK=$BENCH_DIR/sock
LOGS=$BENCH_DIR/logs
PORT=${BENCH_PORT:-54329}
DB=bench
if ((${#SOCK} > 90)); then
    # unix socket paths are limited to ~107 bytes
    SOCK=$(mktemp -d /tmp/syncwf-bench-sock.XXXXXX)
fi

BG_PIDS=()
FILLER_PID=
# shellcheck disable=SC2317  # invoked through the EXIT trap
cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM
    if [[ -n $FILLER_PID ]]; then
        exec 3>&-                   # EOF on the filler's stdin: psql exits
    fi
    for p in "${BG_PIDS[@]}" $FILLER_PID; do
        kill -0 "$p" 2>/dev/null && kill "$p" 2>/dev/null
    done
    for p in "${BG_PIDS[@]}" $FILLER_PID; do
        wait "$p" 2>/dev/null
    done
    if [[ -f $DATA/postmaster.pid ]]; then
        log "stopping the bench cluster"
        as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast -t 60 -w stop >/dev/null 2>&1 ||
            as_pg "$PGBIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1
    fi
    [[ $SOCK == /tmp/syncwf-bench-sock.* ]] && rm -rf "$SOCK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ -f $DATA/postmaster.pid ]]; then
    log "stopping a bench cluster left over from an earlier run"
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
fi
fresh_pg_dir "$BENCH_DIR"
chmod 755 "$BENCH_DIR"
mkdir -p "$LOGS" "$SOCK"
is_root && chown "$OS_USER:" "$SOCK"
chmod 700 "$SOCK"

log "initdb in $DATA"
as_pg "$PGBIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
    >"$LOGS/initdb.log" 2>&1 || die "initdb failed, see $LOGS/initdb.log"

{
    echo "# scripts/bench.sh"
    echo "listen_addresses = ''"
    echo "unix_socket_directories = '$SOCK'"
    echo "port = $PORT"
    echo "max_connections = 50"
    echo "shared_buffers = 256MB"
    echo "fsync = on"
    echo "synchronous_commit = on"
    if [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        echo "shared_preload_libraries = 'syncwf'"
        echo "syncwf.max_locks = $MAX_LOCKS"
        echo "syncwf.max_entries = $MAX_ENTRIES"
    fi
} >>"$DATA/postgresql.conf"

log "starting the bench cluster (socket $SOCK, port $PORT)"
as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$BENCH_DIR/server.log" -w -t 120 start >/dev/null ||
    die "the bench cluster did not start, see $BENCH_DIR/server.log"

PSQL=("$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U postgres)
q() { as_pg "${PSQL[@]}" -d "$DB" -c "$1"; }

as_pg "${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB" >/dev/null
if [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
    q "CREATE EXTENSION syncwf" >/dev/null
    t=$SECONDS
    q "INSERT INTO sync_limit SELECT 'bench/' || g, 1 FROM generate_series(1, $NAMES) g" >/dev/null
    log "sync_limit: $NAMES rows 'bench/1'..'bench/$NAMES' with sizelimit 1 ($((SECONDS - t)) s)"
fi
as_pg "${PSQL[@]}" -d "$DB" -f "$ROOT/bench/pingpong.sql" >/dev/null
q "VACUUM ANALYZE" >/dev/null

PG_VERSION=$(q "SELECT version()")
SYNCWF_VERSION=n/a
[[ $BENCH_SKIP_SYNCWF != 1 ]] && SYNCWF_VERSION=$(q "SELECT extversion FROM pg_extension WHERE extname = 'syncwf'")

# --- helpers -----------------------------------------------------------------

# Wait until no client backend but ours (and the filler's) is connected, so
# that a run does not start while the previous run's backends still exit.
wait_idle() {
    local i
    for ((i = 0; i < 300; i++)); do
        [[ $(q "SELECT count(*) FROM pg_stat_activity
                 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
                   AND application_name <> 'bench_filler'") == 0 ]] && return 0
        sleep 0.1
    done
    die "backends of an earlier run are still connected after 30 s"
}

# No syncwf holds or waiters may survive a run (when the filler is not there).
check_no_syncwf_leftovers() {
    [[ $BENCH_SKIP_SYNCWF == 1 ]] && return 0
    local n
    wait_idle
    n=$(q "SELECT count(*) FROM sync_entry_status()")
    [[ $n == 0 ]] || die "$n syncwf entries left after all clients disconnected: $(q "SELECT string_agg(lock_name || ' ' || state || ' pid ' || pid, ', ') FROM (SELECT * FROM sync_entry_status() LIMIT 5) s")"
}

# run_pgbench LABEL SCRIPT SECONDS: prints the tps (excluding connection time).
run_pgbench() {
    local label=$1 script=$2 secs=$3 out rc tps failed
    out=$LOGS/pgbench-$label.log
    wait_idle
    rc=0
    as_pg timeout --signal=INT --kill-after=30 $((secs + 60)) \
        "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -U postgres \
        -n -M prepared -c "$CLIENTS" -j "$THREADS" -T "$secs" -f "$script" "$DB" \
        >"$out" 2>&1 || rc=$?
    if ((rc == 124 || rc == 137)); then
        die "pgbench $label did not finish within $((secs + 60)) s (hang?): see $out and $BENCH_DIR/server.log"
    fi
    ((rc == 0)) || die "pgbench $label failed (exit $rc): $(grep -m3 -iE 'error|abort' "$out" | tr '\n' ' ') -- see $out"
    failed=$(awk -F'[: ]+' '/^number of failed transactions/ {print $5}' "$out")
    [[ -z $failed || $failed == 0 ]] || die "pgbench $label: $failed failed transactions, see $out"
    tps=$(awk '/^tps = / && /without initial connection time/ {print $3}' "$out")
    [[ -n $tps ]] || die "pgbench $label: no tps line in $out"
    printf '%.0f\n' "$tps"
}

spread() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 {min = $1} {max = $1} END {printf "%.2f\n", max / min}'; }
median() {
    printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1}
        END { if (NR % 2) printf "%.0f\n", a[(NR + 1) / 2];
              else printf "%.0f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
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
add_summary() {  # comparison, figure, value, op, target
    local v
    if [[ $3 == n/a ]]; then v="n/a (not run)"; else v=$(verdict "$3" "$4" "$5"); fi
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
        MED_A=$(median "${A[@]}")
        ROUND_ROWS+=("| $name | $la | $(IFS='|'; echo "${A[*]}" | sed 's/|/ \/ /g') | $MED_A | $(spread "${A[@]}") |")
    else
        MED_A=n/a
    fi
    MED_B=$(median "${B[@]}")
    ROUND_ROWS+=("| $name | $lb | $(IFS='|'; echo "${B[*]}" | sed 's/|/ \/ /g') | $MED_B | $(spread "${B[@]}") |")
}

SW_RANDOM=$ROOT/bench/syncwf_random.sql
SW_HOT=$ROOT/bench/syncwf_hot.sql
if [[ $BENCH_SKIP_SYNCWF == 1 ]]; then SW_RANDOM=-; SW_HOT=-; fi

# --- 1. random names -----------------------------------------------------------

log "comparison 1: random names, $CLIENTS clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
compare_ab "1-random" syncwf "$SW_RANDOM" advisory "$ROOT/bench/advisory_random.sql"
R1_SW=$MED_A R1_ADV=$MED_B
R1=n/a; [[ $R1_SW != n/a ]] && R1=$(ratio "$R1_SW" "$R1_ADV")
add_summary "1. random names" "median tps syncwf / advisory ($R1_SW / $R1_ADV)" "$R1" ">=" 0.8

# --- 2. one hot mutex ----------------------------------------------------------

log "comparison 2: one hot lock, $CLIENTS clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
compare_ab "2-hot" syncwf "$SW_HOT" advisory "$ROOT/bench/advisory_hot.sql"
R2_SW=$MED_A R2_ADV=$MED_B
R2=n/a; [[ $R2_SW != n/a ]] && R2=$(ratio "$R2_SW" "$R2_ADV")
add_summary "2. one hot lock" "median tps syncwf / advisory ($R2_SW / $R2_ADV)" "$R2" ">=" 0.8

# --- 3. release -> waiter-running latency ---------------------------------------

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
done
if [[ $BENCH_SKIP_SYNCWF == 1 ]]; then L_P99=n/a L_P50=n/a; fi
add_summary "3. hand-off latency" "syncwf p99 over all hand-offs, microseconds (p50 $L_P50)" "$L_P99" "<=" 1000

# --- 4. cost with 1,000,000 other live locks ------------------------------------

FILL_ROWS=()
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

if [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
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
    exec 3>&-
    wait "$FILLER_PID" || true
    FILLER_PID=
    ((${#E[@]} > 0 && ${#F[@]} > 0)) || die "BENCH_FULL_ORDER needs at least one E and one F"
    R4_E=$(median "${E[@]}") R4_F=$(median "${F[@]}")
    ROUND_ROWS+=("| 4-fill | syncwf, no other locks | $(IFS='|'; echo "${E[*]}" | sed 's/|/ \/ /g') | $R4_E | $(spread "${E[@]}") |")
    ROUND_ROWS+=("| 4-fill | syncwf, $FILL other locks held | $(IFS='|'; echo "${F[*]}" | sed 's/|/ \/ /g') | $R4_F | $(spread "${F[@]}") |")
    R4=$(ratio "$R4_E" "$R4_F")
    add_summary "4. 1,000,000 live locks" "median tps empty / full ($R4_E / $R4_F)" "$R4" "<=" 1.3
else
    add_summary "4. 1,000,000 live locks" "median tps empty / full" "n/a" "<=" 1.3
fi

# --- server log sanity ------------------------------------------------------------

if grep -qE 'PANIC|TRAP:|terminated by signal|was terminated|server process .* exited with exit code [^0]' "$BENCH_DIR/server.log"; then
    die "the server log reports a crash: $(grep -m3 -E 'PANIC|TRAP:|terminated by signal|was terminated|exited with exit code' "$BENCH_DIR/server.log" | tr '\n' ' ')"
fi

# --- report ------------------------------------------------------------------

ELAPSED=$((SECONDS - T0))
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
CPU=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)
MEM=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
if [[ $BENCH_SKIP_SYNCWF == 1 ]]; then
    CLUSTER_SYNCWF="syncwf not loaded (BENCH_SKIP_SYNCWF=1)"
else
    CLUSTER_SYNCWF="shared_preload_libraries = 'syncwf', syncwf.max_locks = $MAX_LOCKS, syncwf.max_entries = $MAX_ENTRIES"
fi
PGBENCH_CMD="pgbench -n -M prepared -c $CLIENTS -j $THREADS -T $BENCH_SECONDS -f <script> $DB"

mkdir -p "$(dirname "$BENCH_OUT")"
{
cat <<EOF
# syncwf benchmarks

Written by \`make bench\` (scripts/bench.sh); do not edit by hand. Every
figure on this page comes from the run of $(date -u '+%Y-%m-%d %H:%M UTC'), which took ${ELAPSED} s.

## What is compared

syncwf is compared with PostgreSQL's own session-level advisory locks
(\`pg_advisory_lock\` / \`pg_advisory_unlock\`), which live in the same
shared-memory lock manager as table locks. Within a comparison the contenders
are interleaved (syncwf, advisory, syncwf, advisory, ...), after an unrecorded
warm-up of ${BENCH_WARMUP} s each, so that machine noise hits both; each
contender's figure is the median of its rounds. One pgbench transaction is one
acquire plus one release, each its own statement (and its own implicit
transaction).

1. **Random names**: $CLIENTS clients acquire and release a random lock of
   $NAMES: \`sync_acquire('sem/bench/' || n)\` / \`sync_release(...)\`
   with \`n\` uniform in 1..$NAMES, each semaphore having a \`sync_limit\` row
   of limit 1 so it behaves like a mutex, against
   \`pg_advisory_lock(n)\` / \`pg_advisory_unlock(n)\`. Measures the
   uncontended acquire/release path. Target: syncwf at least 0.8 x advisory.
   Scripts: bench/syncwf_random.sql, bench/advisory_random.sql.
2. **One hot lock**: the same $CLIENTS clients all take turns on one mutex
   \`mtx/bench/hot\` against one advisory lock (key 42). Measures queueing and
   hand-off under full contention. Target: syncwf at least 0.8 x advisory.
   Scripts: bench/syncwf_hot.sql, bench/advisory_hot.sql.
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
   the p99 over all syncwf hand-offs. Target: syncwf p99 at most 1 ms.
   Advisory locks are measured the same way for reference. Script:
   bench/pingpong.sql.
4. **Cost of 1,000,000 live locks**: workload 1's syncwf script with no other
   lock (E) and while another, idle session holds $FILL mutexes
   \`mtx/fill/1..$FILL\` (F), taken with
   \`SELECT count(sync_acquire('mtx/fill/' || g)) FROM generate_series(1, $FILL) g\`
   and verified through \`sync_holders\` before measuring. Rounds in the order
   \`$BENCH_FULL_ORDER\`; the filler releases with \`sync_release_all()\` before
   an E round. Target: median tps empty / full at most 1.3.

## How to reproduce

\`\`\`
make bench                    # BENCH_SECONDS=N to change the length of each run
\`\`\`

It builds and installs the extension (\`make && make install\`), creates a
throwaway cluster in \`.bench/\` (unix socket only) with the settings below, runs
the comparisons, prints this report and writes it here. Logs of every run stay
in \`.bench/logs/\`.

## Machine and settings

| | |
| --- | --- |
| date | $(date -u '+%Y-%m-%d %H:%M:%S UTC') |
| CPUs (nproc) | $(nproc) |
| CPU model | ${CPU:-unknown} |
| memory | $MEM |
| kernel | $(uname -sr) |
| load average (1, 5, 15 min) | $LOAD_BEFORE at the start, $LOAD_AFTER at the end (the benchmark's own load included; other work on the machine is not stopped) |
| PostgreSQL | $PG_VERSION |
| syncwf | $SYNCWF_VERSION, built from commit $COMMIT |
| cluster | shared_buffers = 256MB, max_connections = 50, fsync = on, synchronous_commit = on, $CLUSTER_SYNCWF; unix socket, pgbench on the same machine |
| pgbench | \`$PGBENCH_CMD\`, $BENCH_ROUNDS rounds per contender (comparisons 1, 2), warm-up ${BENCH_WARMUP} s per contender |
| tps | pgbench's "tps ... without initial connection time" |

## Results

| comparison | figure | value | target | verdict |
| --- | --- | --- | --- | --- |
$(printf '%s\n' "${SUMMARY[@]}")

### Throughput per round (tps)

Spread is the fastest round over the slowest round of the same contender: how
much the machine's own noise moved the figures during this run.

| comparison | contender | rounds in run order | median | spread (max / min) |
| --- | --- | --- | --- | --- |
$(printf '%s\n' "${ROUND_ROWS[@]}")

### Hand-off latency (microseconds)

Rounds in run order, then all rounds of a lock together (bold).

| lock | round | hand-offs | acquires | p50 | p99 | max |
| --- | --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${LAT_ROWS[@]}")
EOF
if ((${#FILL_ROWS[@]} > 0)); then
cat <<EOF

### Filler (comparison 4)

| step | what | seconds (server-side statement time) |
| --- | --- | --- |
$(printf '%s\n' "${FILL_ROWS[@]}")
EOF
fi
} >"$BENCH_OUT.tmp"
mv "$BENCH_OUT.tmp" "$BENCH_OUT"

echo
cat "$BENCH_OUT"
echo
log "done in ${ELAPSED} s; report written to ${BENCH_OUT#"$ROOT"/}; $MISSES target(s) missed"
if [[ $BENCH_STRICT == 1 ]] && ((MISSES > 0)); then
    exit 1
fi
exit 0
