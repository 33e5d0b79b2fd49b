#!/usr/bin/env bash
# scripts/bench.sh: syncwf benchmark, run by `make bench`.
#
# Builds and installs the extension, starts a throwaway cluster in .bench/
# (unix socket only, inside .bench/), and compares syncwf's session holds
# with PostgreSQL's advisory locks (comparisons 1-4), its keyed holds with
# a plain-SQL table semaphore (5), a deep queue (6) and a target hand-off
# latency, to a LISTEN connection and to a blocked sync_wait (7), and its
# launch-plan policies with a Flyte-style count-then-insert (8) and a
# target slot hand-off latency (9), the capacity model's cost (10),
# rate-limited grants (11) and best-effort queueing's slot utilisation (12).  Contenders
# are interleaved within the run (A, B, A, B, ...) so machine noise hits all
# of them; the median of each contender is reported.  Comparison 10, whose
# contenders differ by a few percent at most, goes further: they share one
# pgbench run, a script picked at random per transaction.  The
# results table is printed and written to docs/benchmarks.md; every figure in
# that file comes from this run.
#
# Environment:
#   BENCH_ONLY         comparisons to run: "all" (default), "engine" (1-4, 10-13),
#                      "keyed" (5-7), "launch" (8-9) or numbers, e.g. "5 7"
#                      or "1,5"; the others are reported as not run.  A
#                      partial run writes its report to
#                      $BENCH_DIR/benchmarks.md unless
#                      BENCH_OUT says otherwise (docs/ keeps full runs only)
#   BENCH_SECONDS      duration of each pgbench run (default 10)
#   BENCH_ROUNDS       rounds per contender in comparisons 1, 2, 5 and 8
#                      (default 5)
#   BENCH_FULL_ORDER   order of empty/full rounds in comparison 4 (default
#                      "E F E F E F E F"); every F after an E refills
#                      1,000,000 locks (a few seconds each)
#   BENCH_HANDOFFS     iterations per session in comparison 3 (default 1001,
#                      i.e. 2001 hand-offs per round)
#   BENCH_LAT_ROUNDS   rounds per contender in comparisons 3, 7 and 9,
#                      interleaved (default 3)
#   BENCH_DEEP_ORDER   order of empty/deep rounds in comparison 6 (default
#                      "E F E F E F E F"); every F after an E queues 100,000
#                      keyed requests again (a few seconds each)
#   BENCH_KEYED_HANDOFFS  hand-offs per round in comparison 7 (default 1000)
#   BENCH_LAUNCH_HANDOFFS hand-offs per round in comparison 9 (default 1000)
#   BENCH_WARMUP       seconds of unrecorded warm-up per contender (default 2)
#   BENCH_SKIP_SYNCWF  1: do not build or load syncwf; run only the advisory
#                      contenders (to test this script); the report goes to
#                      .bench/benchmarks.md instead of docs/
#   BENCH_SKIP_BUILD   1: do not build; benchmark the syncwf already installed
#                      (the report says so); SYNCWF_NO_BUILD=1 means the same
#   BENCH_DIR          the throwaway cluster, logs and helper binary
#                      (default .bench/ in the repository)
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
BENCH_DEEP_ORDER=${BENCH_DEEP_ORDER:-"E F E F E F E F"}
BENCH_HANDOFFS=${BENCH_HANDOFFS:-1001}
BENCH_KEYED_HANDOFFS=${BENCH_KEYED_HANDOFFS:-1000}
BENCH_LAUNCH_HANDOFFS=${BENCH_LAUNCH_HANDOFFS:-1000}
BENCH_LAT_ROUNDS=${BENCH_LAT_ROUNDS:-3}
BENCH_WARMUP=${BENCH_WARMUP:-2}
BENCH_SKIP_SYNCWF=${BENCH_SKIP_SYNCWF:-0}
BENCH_STRICT=${BENCH_STRICT:-0}
BENCH_ONLY=${BENCH_ONLY:-all}
[[ ${SYNCWF_NO_BUILD:-0} == 1 ]] && BENCH_SKIP_BUILD=1
BENCH_DIR=${BENCH_DIR:-$ROOT/.bench}

die() { printf '[bench] ERROR: %s\n' "$*" >&2; exit 1; }

# BENCH_ONLY -> the set of comparisons to run
RUN=" "
for w in ${BENCH_ONLY//,/ }; do
    case $w in
    all) RUN+="1 2 3 4 5 6 7 8 9 10 11 12 13 " ;;
    engine) RUN+="1 2 3 4 10 11 12 13 " ;;
    keyed) RUN+="5 6 7 " ;;
    launch) RUN+="8 9 " ;;
    [1-9] | 1[0-3]) RUN+="$w " ;;
    *) die "BENCH_ONLY: unknown word '$w' (use all, engine, keyed, launch or numbers 1-13)" ;;
    esac
done
want() { [[ $RUN == *" $1 "* ]]; }
PARTIAL=0
for n in 1 2 3 4 5 6 7 8 9 10 11 12 13; do want "$n" || PARTIAL=1; done
[[ $RUN == " " ]] && die "BENCH_ONLY selects no comparison"

if [[ $BENCH_SKIP_SYNCWF == 1 || $PARTIAL == 1 ]]; then
    BENCH_OUT=${BENCH_OUT:-$BENCH_DIR/benchmarks.md}
else
    BENCH_OUT=${BENCH_OUT:-$ROOT/docs/benchmarks.md}
fi

CLIENTS=8
THREADS=2
NAMES=100000          # sync_limit rows bench/1..bench/N, range of random keys
FILL=1000000          # live locks held by the filler in comparison 4
KEYED_SEMS=1000       # comparison 5: semaphores sem/bench/k1..k<N>
KEYED_LIMIT=2         # ... and their limit
DEEP=100000           # comparison 6: pending keyed requests in the deep queue
DEEP_LOCK=sem/bench/deep          # the queue (limit CLIENTS)
DEEP_BLOCK=mtx/bench/deep-block   # held throughout comparison 6
HO_WARMUP=20          # unrecorded hand-offs per round of comparison 7
LAUNCH_HISTORY=100000 # comparison 8: terminal executions in the tables
LAUNCH_MAX=1000       # ... and the max_concurrency of the WAIT plan launched
LO_WARMUP=20          # unrecorded hand-offs per round of comparison 9
MAX_LOCKS=1100000
MAX_ENTRIES=1200000
MAX_HOLDERS=300000

for v in BENCH_SECONDS BENCH_ROUNDS BENCH_HANDOFFS BENCH_LAT_ROUNDS BENCH_WARMUP BENCH_KEYED_HANDOFFS BENCH_LAUNCH_HANDOFFS; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer"
done
((BENCH_SECONDS > 0 && BENCH_ROUNDS > 0 && BENCH_LAT_ROUNDS > 0 && BENCH_HANDOFFS > 1 && BENCH_KEYED_HANDOFFS > 0 && BENCH_LAUNCH_HANDOFFS > 0)) ||
    die "BENCH_SECONDS, BENCH_ROUNDS, BENCH_LAT_ROUNDS, BENCH_KEYED_HANDOFFS, BENCH_LAUNCH_HANDOFFS must be > 0 and BENCH_HANDOFFS > 1"

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

ensure_packages libpq-dev     # libpq-fe.h for bench/keyed_handoff.c, bench/launch_handoff.c
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
SRC_COMMIT=$(git -C "$ROOT" log -1 --format=%h -- src 'syncwf--*.sql' Makefile 2>/dev/null || true)
[[ -n $SRC_COMMIT && $SRC_COMMIT != "${COMMIT}" ]] && COMMIT="$COMMIT (engine source last changed in $SRC_COMMIT)"
DIRTY=$(git -C "$ROOT" status --porcelain -- src 'syncwf--*.sql' Makefile 2>/dev/null | head -1)
[[ -n $DIRTY ]] && COMMIT="$COMMIT, with uncommitted changes in src/, syncwf--*.sql or Makefile"
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
        echo "syncwf.max_holders = $MAX_HOLDERS"
        echo "syncwf.database = '$DB'"
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
    q "INSERT INTO sync_limit SELECT 'benchw/' || g, 4 FROM generate_series(1, $NAMES) g;
       INSERT INTO sync_limit VALUES ('benchp/*', 1)" >/dev/null
    q "INSERT INTO sync_limit SELECT 'bench/k' || g, $KEYED_LIMIT FROM generate_series(1, $KEYED_SEMS) g;
       INSERT INTO sync_limit VALUES ('${DEEP_LOCK#sem/}', $CLIENTS)" >/dev/null
fi
as_pg "${PSQL[@]}" -d "$DB" -f "$ROOT/bench/pingpong.sql" >/dev/null
as_pg "${PSQL[@]}" -d "$DB" -f "$ROOT/bench/keyed_setup.sql" >/dev/null
q "INSERT INTO bench_sem_limit SELECT 'sem/bench/k' || g, $KEYED_LIMIT FROM generate_series(1, $KEYED_SEMS) g" >/dev/null
if want 7; then
    # comparison 7's client, built with libpq; run as the server user
    HO_BIN=$BENCH_DIR/keyed_handoff
    cc -O2 -Wall -Werror -I"$("$PG_CONFIG" --includedir)" "$ROOT/bench/keyed_handoff.c" \
        -L"$("$PG_CONFIG" --libdir)" -lpq -o "$HO_BIN" >"$LOGS/keyed_handoff-build.log" 2>&1 ||
        die "building bench/keyed_handoff.c failed, see $LOGS/keyed_handoff-build.log"
    chmod 755 "$HO_BIN"
fi
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
if want 9 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
    q "SELECT sync_launch_plan_register('bench', 'dev', 'lp9', 'v1', 1, 'WAIT')" >/dev/null
    # comparison 9's client, built with libpq; run as the server user
    LO_BIN=$BENCH_DIR/launch_handoff
    cc -O2 -Wall -Werror -I"$("$PG_CONFIG" --includedir)" "$ROOT/bench/launch_handoff.c" \
        -L"$("$PG_CONFIG" --libdir)" -lpq -o "$LO_BIN" >"$LOGS/launch_handoff-build.log" 2>&1 ||
        die "building bench/launch_handoff.c failed, see $LOGS/launch_handoff-build.log"
    chmod 755 "$LO_BIN"
fi
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

SW_RANDOM=$ROOT/bench/syncwf_random.sql
SW_HOT=$ROOT/bench/syncwf_hot.sql
if [[ $BENCH_SKIP_SYNCWF == 1 ]]; then SW_RANDOM=-; SW_HOT=-; fi

# --- 1. random names -----------------------------------------------------------

if want 1; then
    log "comparison 1: random names, $CLIENTS clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
    compare_ab "1-random" syncwf "$SW_RANDOM" advisory "$ROOT/bench/advisory_random.sql"
    R1_SW=$MED_A R1_ADV=$MED_B
    R1=n/a; [[ $R1_SW != n/a ]] && R1=$(ratio "$R1_SW" "$R1_ADV")
    add_summary "1. random names" "median tps syncwf / advisory ($R1_SW / $R1_ADV)" "$R1" ">=" 0.95
else
    add_summary "1. random names" "median tps syncwf / advisory" "n/a" ">=" 0.95
fi

# --- 2. one hot mutex ----------------------------------------------------------

if want 2; then
    log "comparison 2: one hot lock, $CLIENTS clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
    compare_ab "2-hot" syncwf "$SW_HOT" advisory "$ROOT/bench/advisory_hot.sql"
    R2_SW=$MED_A R2_ADV=$MED_B
    R2=n/a; [[ $R2_SW != n/a ]] && R2=$(ratio "$R2_SW" "$R2_ADV")
    add_summary "2. one hot lock" "median tps syncwf / advisory ($R2_SW / $R2_ADV)" "$R2" ">=" 1.0
else
    add_summary "2. one hot lock" "median tps syncwf / advisory" "n/a" ">=" 1.0
fi

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

if want 3; then
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
        [[ $kind == advisory ]] && A_P99=$p99
    done
    if [[ $BENCH_SKIP_SYNCWF == 1 ]]; then L_P99=n/a L_P50=n/a; fi
    add_summary "3. hand-off latency" "syncwf p99 over all hand-offs, microseconds (p50 $L_P50), at most advisory's p99" "$L_P99" "<=" "$A_P99"
else
    add_summary "3. hand-off latency" "syncwf p99 over all hand-offs, microseconds, at most advisory's p99" "n/a" "<=" n/a
fi

# --- 4. cost with 1,000,000 other live locks ------------------------------------

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

# --- keyed holds: helpers -----------------------------------------------------------

# The worker hands freed slots to pending keyed requests and sends their
# NOTIFYs; it connects to syncwf.database (bench), retrying every 5 s until
# that database exists.
wait_worker() {
    local i
    for ((i = 0; i < 300; i++)); do
        [[ $(q "SELECT count(*) FROM pg_stat_activity
                 WHERE backend_type = 'syncwf worker' AND datname = current_database()") == 1 ]] && return 0
        sleep 0.1
    done
    die "the syncwf worker is not connected to database $DB after 30 s, see $BENCH_DIR/server.log"
}

# No keyed rows may survive a run but the named holder's.
check_keyed_rows() {
    local keep=${1:-} n
    wait_idle
    n=$(q "SELECT count(*) FROM sync_state WHERE workflowkey IS DISTINCT FROM nullif('$keep', '')")
    [[ $n == 0 ]] || die "$n sync_state rows left after a run: $(q "SELECT string_agg(name || ' ' || workflowkey, ', ') FROM (SELECT * FROM sync_state LIMIT 5) s")"
}

# elapsed seconds since a date +%s.%N stamp, one decimal
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }'; }

if [[ $BENCH_SKIP_SYNCWF != 1 ]] && { want 5 || want 6 || want 7 || want 8 || want 9; }; then
    wait_worker
fi

# --- 5. keyed holds vs a plain-SQL table semaphore ---------------------------------

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

# --- 6. request + release at the front of a 100,000-deep keyed queue ---------------

DEEP_ROWS=()
# deep_counts: "holders waiters" of the deep queue's lock
deep_counts() {
    q "SELECT coalesce(sum(holders), 0), coalesce(sum(waiters), 0)
         FROM sync_locks WHERE lock_name = '$DEEP_LOCK'" | tr '|' ' '
}
# The blocker: holds $DEEP_BLOCK throughout, so that the queued two-lock
# requests can never be granted.
deep_block() {
    [[ $(q "SELECT status FROM sync_request('$DEEP_BLOCK', 'bench/deep/blocker')") == held ]] ||
        die "could not take $DEEP_BLOCK for comparison 6"
}
# Empty the deep queue: TRUNCATE sync_state withdraws every keyed entry at
# commit in one step (withdrawing $DEEP two-lock requests one by one costs a
# sequential scan of sync_state each: sync_state has no index on
# workflowkey), then the blocker takes $DEEP_BLOCK again.
deep_withdraw() {
    q "TRUNCATE sync_state" >/dev/null
    deep_block
}
if want 6 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
    log "comparison 6: keyed request + release at the front of an empty queue (E) and of $DEEP pending requests (F), order: $BENCH_DEEP_ORDER"
    deep_block
    deep=0 fills=0
    # a failed round (a request not granted at the front, a release that
    # found nothing) leaves the lock's holders and first waiters in its log
    PGBENCH_FAIL_QUERY="SELECT 'holder', holder, pid, token, since FROM sync_holders WHERE lock_name = '$DEEP_LOCK'
                        UNION ALL (SELECT 'waiter', holder, pid, position, waiting_since FROM sync_waiters
                                    WHERE lock_name = '$DEEP_LOCK' ORDER BY position LIMIT 10)"
    E=() F=()
    if ((BENCH_WARMUP > 0)); then run_pgbench "6-warmup" "$ROOT/bench/keyed_deep.sql" "$BENCH_WARMUP" >/dev/null; fi
    for step in $BENCH_DEEP_ORDER; do
        case $step in
        E)
            if ((deep)); then
                t=$(date +%s.%N)
                deep_withdraw
                secs=$(since "$t")
                check_keyed_rows bench/deep/blocker
                read -r nh nw < <(deep_counts)
                [[ "$nh $nw" == "0 0" ]] || die "after withdrawing the deep queue: $nh holders, $nw waiters on $DEEP_LOCK"
                q "VACUUM ANALYZE sync_state" >/dev/null
                log "withdrew the $DEEP queued requests in ${secs}s"
                DEEP_ROWS+=("| withdraw $fills | \`TRUNCATE sync_state\`, then the blocker's request again | $secs |")
                deep=0
            fi
            t=$(run_pgbench "6-empty-$((${#E[@]} + 1))" "$ROOT/bench/keyed_deep.sql" "$BENCH_SECONDS")
            check_keyed_rows bench/deep/blocker
            E+=("$t")
            log "6 round ${#E[@]}: empty queue $t tps"
            ;;
        F)
            if ((!deep)); then
                fills=$((fills + 1))
                t=$(date +%s.%N)
                n=$(q "SELECT count(*) FROM generate_series(1, $DEEP) g,
                              LATERAL sync_request(ARRAY['$DEEP_LOCK', '$DEEP_BLOCK'], 'bench/deep/q' || g,
                                                   priority => g - $DEEP - 1) r
                        WHERE r.status = 'pending'")
                secs=$(since "$t")
                [[ $n == $((2 * DEEP)) ]] ||
                    die "the deep queue: $n pending rows instead of $((2 * DEEP)); holders of both locks: $(q "SELECT string_agg(lock_name || ' ' || coalesce(holder, 'pid ' || pid) || ' token ' || token, ', ') FROM sync_holders WHERE lock_name IN ('$DEEP_LOCK', '$DEEP_BLOCK')"); rows held: $(q "SELECT string_agg(name || ' ' || workflowkey || ' token ' || token, ', ') FROM sync_state WHERE held")"
                read -r nh nw < <(deep_counts)
                [[ "$nh $nw" == "0 $DEEP" ]] || die "the deep queue: $nh holders, $nw waiters on $DEEP_LOCK instead of 0, $DEEP"
                chk=$(q "SELECT count(*) FILTER (WHERE active), min(position), max(position)
                           FROM sync_waiters WHERE lock_name = '$DEEP_LOCK'" | tr '|' ' ')
                [[ $chk == "$DEEP 1 $DEEP" ]] || die "the deep queue (active, first, last position): $chk"
                q "VACUUM ANALYZE sync_state" >/dev/null
                log "queued $DEEP two-lock requests in ${secs}s ($DEEP_LOCK: $nh holders, $nw waiters, all active)"
                DEEP_ROWS+=("| queue $fills | $DEEP x \`sync_request(ARRAY['$DEEP_LOCK', '$DEEP_BLOCK'], 'bench/deep/q<g>', priority => g - $((DEEP + 1)))\` in one statement; then $DEEP_LOCK has $nh holders and $nw active waiters | $secs |")
                deep=1
            fi
            t=$(run_pgbench "6-deep-$((${#F[@]} + 1))" "$ROOT/bench/keyed_deep.sql" "$BENCH_SECONDS")
            wait_idle
            read -r nh nw < <(deep_counts)
            [[ "$nh $nw" == "0 $DEEP" ]] || die "after a deep round: $nh holders, $nw waiters on $DEEP_LOCK instead of 0, $DEEP"
            F+=("$t")
            log "6 round ${#F[@]}: $DEEP queued $t tps"
            ;;
        *) die "BENCH_DEEP_ORDER: unknown step '$step' (use E and F)" ;;
        esac
    done
    PGBENCH_FAIL_QUERY=
    ((deep)) && deep_withdraw
    [[ $(q "SELECT sync_release('$DEEP_BLOCK', 'bench/deep/blocker')") == t ]] ||
        die "could not release $DEEP_BLOCK after comparison 6"
    check_keyed_rows
    q "VACUUM ANALYZE sync_state" >/dev/null
    ((${#E[@]} > 0 && ${#F[@]} > 0)) || die "BENCH_DEEP_ORDER needs at least one E and one F"
    R6_E=$(median "${E[@]}") R6_F=$(median "${F[@]}")
    ROUND_ROWS+=("| 6-deep | syncwf keyed, empty queue | $(IFS='|'; echo "${E[*]}" | sed 's/|/ \/ /g') | $R6_E | $(spread "${E[@]}") |")
    ROUND_ROWS+=("| 6-deep | syncwf keyed, $DEEP queued behind | $(IFS='|'; echo "${F[*]}" | sed 's/|/ \/ /g') | $R6_F | $(spread "${F[@]}") |")
    R6=$(ratio "$R6_E" "$R6_F")
    add_summary "6. 100,000-deep keyed queue" "median tps empty / deep ($R6_E / $R6_F)" "$R6" "<=" 1.3
else
    add_summary "6. 100,000-deep keyed queue" "median tps empty / deep" "n/a" "<=" 1.3
fi

# --- 7. keyed hand-off: sync_release -> the pending holder's NOTIFY ----------------

HO_ROWS=()
# ho_stats FILE...: "hand-offs p50 p99 max call_p50" (percentile_disc, microseconds)
ho_stats() {
    # shellcheck disable=SC2016  # awk code
    local pcts='function pct(p,   i) { i = int(p * NR); if (i < p * NR) i++; if (i < 1) i = 1; return v[i] }
                { v[NR] = $1 }'
    printf '%s %s\n' \
        "$(awk '{print $1}' "$@" | sort -n | awk "$pcts"' END { print NR, pct(0.5), pct(0.99), v[NR] }')" \
        "$(awk '{print $2}' "$@" | sort -n | awk "$pcts"' END { print pct(0.5) }')"
}
# the contenders of comparison 7, as the report names them
ho_label() {
    case $1 in
        syncwf) echo "syncwf, LISTEN" ;;
        wait) echo "syncwf, sync_wait" ;;
        sql) echo "plain SQL" ;;
    esac
}
# ho_round MODE ROUND (MODE: syncwf, wait or sql; see bench/keyed_handoff.c)
ho_round() {
    local mode=$1 r=$2 out rc=0 n p50 p99 pmax c50 label
    out=$LOGS/keyed-handoff-$mode-$r
    wait_idle
    as_pg timeout 600 "$HO_BIN" "host=$SOCK port=$PORT user=postgres dbname=$DB" \
        "$mode" "$BENCH_KEYED_HANDOFFS" "$HO_WARMUP" >"$out.txt" 2>"$out.err" || rc=$?
    ((rc == 0)) || die "keyed hand-off $mode round $r failed (exit $rc): $(head -c 300 "$out.err") -- see $out.err"
    read -r n p50 p99 pmax c50 < <(ho_stats "$out.txt")
    [[ $n == "$BENCH_KEYED_HANDOFFS" ]] || die "keyed hand-off $mode round $r: $n hand-offs recorded instead of $BENCH_KEYED_HANDOFFS"
    label=$(ho_label "$mode")
    log "keyed hand-off $mode round $r: $n hand-offs: p50 ${p50} us, p99 ${p99} us, max ${pmax} us (release call p50 ${c50} us)"
    HO_ROWS+=("| $label | $r | $n | $p50 | $p99 | $pmax | $c50 |")
}

if want 7; then
    log "comparison 7: keyed hand-off latency, $BENCH_LAT_ROUNDS rounds per contender of $BENCH_KEYED_HANDOFFS hand-offs"
    for ((r = 1; r <= BENCH_LAT_ROUNDS; r++)); do
        if [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
            ho_round syncwf "$r"
            check_keyed_rows
            ho_round wait "$r"
            check_keyed_rows
        fi
        ho_round sql "$r"
        [[ $(q "SELECT count(*) FROM bench_ho") == 0 ]] || die "bench_ho rows left after a round"
    done
    H_P99=n/a H_P50=n/a W_P99=n/a W_P50=n/a S_P99=n/a S_P50=n/a
    for mode in syncwf wait sql; do
        [[ $mode != sql && $BENCH_SKIP_SYNCWF == 1 ]] && continue
        read -r n p50 p99 pmax c50 < <(ho_stats "$LOGS"/keyed-handoff-"$mode"-*.txt)
        label=$(ho_label "$mode")
        HO_ROWS+=("| **$label** | **all** | **$n** | **$p50** | **$p99** | **$pmax** | **$c50** |")
        case $mode in
            syncwf) H_P99=$p99 H_P50=$p50 ;;
            wait) W_P99=$p99 W_P50=$p50 ;;
            sql) S_P99=$p99 S_P50=$p50 ;;
        esac
    done
    add_summary "7. keyed hand-off latency" "syncwf p50 over all hand-offs to a LISTEN connection, microseconds, at most the plain-SQL reference's p50" "$H_P50" "<=" "$S_P50"
    add_summary "7. keyed hand-off latency" "syncwf p99 over all hand-offs to a LISTEN connection, microseconds, at most the plain-SQL reference's p99" "$H_P99" "<=" "$S_P99"
    add_summary "7. keyed hand-off latency" "syncwf p99 over all hand-offs to a blocked sync_wait, microseconds (p50 $W_P50)" "$W_P99" "<=" 5000
else
    add_summary "7. keyed hand-off latency" "syncwf p50 over all hand-offs to a LISTEN connection, microseconds, at most the plain-SQL reference's p50" "n/a" "<=" n/a
    add_summary "7. keyed hand-off latency" "syncwf p99 over all hand-offs to a LISTEN connection, microseconds, at most the plain-SQL reference's p99" "n/a" "<=" n/a
    add_summary "7. keyed hand-off latency" "syncwf p99 over all hand-offs to a blocked sync_wait, microseconds" "n/a" "<=" 5000
fi

# --- 8. launch-plan executions vs a Flyte-style count-then-insert ----------------

LAUNCH_ROWS=()
LAUNCH_TERMINAL="'SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT'"
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
if want 8; then
    log "comparison 8: launch + terminal update on a WAIT plan with $LAUNCH_HISTORY terminal executions, syncwf vs flyteadmin's count-then-insert with (flyte, as shipped) and without (flyte_nophase) its index on phase, $CLIENTS clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
    declare -A L8=() M8=()
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

# --- 9. launch-plan slot hand-off: terminal update -> "promoted" NOTIFY ------------

LO_ROWS=()
lo_round() {
    local r=$1 out rc=0 n p50 p99 pmax c50 prefix=b9/r$1 live ev
    out=$LOGS/launch-handoff-$r
    wait_idle
    as_pg timeout 600 "$LO_BIN" "host=$SOCK port=$PORT user=postgres dbname=$DB" \
        "$prefix" "$BENCH_LAUNCH_HANDOFFS" "$LO_WARMUP" >"$out.txt" 2>"$out.err" || rc=$?
    ((rc == 0)) || die "launch hand-off round $r failed (exit $rc): $(head -c 300 "$out.err") -- see $out.err"
    read -r n p50 p99 pmax c50 < <(ho_stats "$out.txt")
    [[ $n == "$BENCH_LAUNCH_HANDOFFS" ]] || die "launch hand-off round $r: $n hand-offs recorded instead of $BENCH_LAUNCH_HANDOFFS"
    check_keyed_rows
    live=$(q "SELECT count(*) FROM sync_execution WHERE (project, domain, name) = ('bench', 'dev', 'lp9')
               AND phase NOT IN ($LAUNCH_TERMINAL)")
    [[ $live == 0 ]] || die "launch hand-off round $r: $live executions of bench/dev/lp9 still live"
    ev=$(q "SELECT count(*) FROM sync_launch_event WHERE event = 'PROMOTED' AND execution_id LIKE '$prefix/%'")
    [[ $ev == $((BENCH_LAUNCH_HANDOFFS + LO_WARMUP)) ]] ||
        die "launch hand-off round $r: $ev PROMOTED events instead of $((BENCH_LAUNCH_HANDOFFS + LO_WARMUP))"
    log "launch hand-off round $r: $n hand-offs: p50 ${p50} us, p99 ${p99} us, max ${pmax} us (update call p50 ${c50} us)"
    LO_ROWS+=("| $r | $n | $p50 | $p99 | $pmax | $c50 |")
}

if want 9 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
    log "comparison 9: launch-plan slot hand-off latency, $BENCH_LAT_ROUNDS rounds of $BENCH_LAUNCH_HANDOFFS hand-offs"
    for ((r = 1; r <= BENCH_LAT_ROUNDS; r++)); do
        lo_round "$r"
    done
    read -r n p50 p99 pmax c50 < <(ho_stats "$LOGS"/launch-handoff-*.txt)
    LO_ROWS+=("| **all** | **$n** | **$p50** | **$p99** | **$pmax** | **$c50** |")
    add_summary "9. launch-plan slot hand-off latency" "syncwf p99 over all $n hand-offs, microseconds (p50 $p50), at most comparison 7's LISTEN p99" "$p99" "<=" "${H_P99:-n/a}"
else
    add_summary "9. launch-plan slot hand-off latency" "syncwf p99 over all hand-offs, microseconds, at most comparison 7's LISTEN p99" "n/a" "<=" n/a
fi

# --- 10. the capacity model: weighted, shared, pattern ----------------------------

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
        COST[${labels[$i]}]=$(median_fmt '%.2f' "${A[@]}")
        MIX_US[${labels[$i]}]=$(median_fmt '%.1f' "${M[@]}")
        ROUND_ROWS+=("| $name | ${labels[$i]} (mean latency, us) | $(IFS='|'; echo "${M[*]}" | sed 's/|/ \/ /g') | ${MIX_US[${labels[$i]}]} | cost ratios $(IFS='|'; echo "${A[*]}" | sed 's/|/ \/ /g') |")
    done
}

if want 10 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
    log "comparison 10: plain, weighted, shared, pattern and calibration acquires on random names, mixed in one pgbench run, $(nproc) clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
    # every semaphore of the three namespaces cached first, alike: the
    # rounds measure the steady state, not which contender met a name first
    for ns in bench benchw benchp; do
        q "SELECT count(sync_release('sem/$ns/' || g)) FROM generate_series(1, $NAMES) g
            WHERE sync_acquire('sem/$ns/' || g) > 0" >/dev/null
    done
    compare_mixed "10-capacity" plain "$SW_RANDOM" weighted "$ROOT/bench/syncwf_weighted.sql" \
        shared "$ROOT/bench/syncwf_shared.sql" pattern "$ROOT/bench/syncwf_pattern.sql" \
        calibration "$ROOT/bench/syncwf_calibration.sql"
    for c in weighted shared pattern; do
        add_summary "10. $c acquire" "median over rounds of mean latency $c / plain in the same pgbench run (${MIX_US[$c]} / ${MIX_US[plain]} us): cost at most 1.1 x the plain acquire" \
            "${COST[$c]}" "<=" 1.10
    done
    add_summary "10. calibration" "the same ratio for the plain acquire plus a known extra cost (bench/syncwf_calibration.sql, ${MIX_US[calibration]} us): how big a difference the method shows" \
        "${COST[calibration]}" info ''
else
    for c in weighted shared pattern; do
        add_summary "10. $c acquire" "median over rounds of mean latency $c / plain: cost at most 1.1 x the plain acquire" "n/a" "<=" 1.10
    done
fi

# --- 11. rate-limited grants: delay after each token's due time -----------------

RATE_ROWS=()
RATE_QUEUED=3000     # keyed requests queued per round
RATE_PER_S=1000      # rate_limit per 1 s
if want 11 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
    log "comparison 11: rate-limited grants at $RATE_PER_S/s, $BENCH_LAT_ROUNDS rounds of $RATE_QUEUED queued keyed requests"
    q "CREATE TABLE bench_rate_delays (round int, k int, delay_us float8)" >/dev/null
    for ((r = 1; r <= BENCH_LAT_ROUNDS; r++)); do
        # a paused semaphore (limit 0) with every request queued; then, in
        # one commit, room for all and a full bucket of RATE_PER_S tokens:
        # the first RATE_PER_S are granted at once, from t1 (the first
        # grant) on, and the k-th token after them is due at exactly
        # t1 + k / RATE_PER_S s (the bucket is a GCRA: rate_limits.c)
        q "INSERT INTO sync_limit VALUES ('benchr/r$r', 0, NULL, NULL, NULL)" >/dev/null
        q "SELECT count(*) FROM generate_series(1, $RATE_QUEUED) g, sync_request('sem/benchr/r$r', 'rate/$r/' || g)" >/dev/null
        wait_idle
        q "UPDATE sync_limit SET sizelimit = $RATE_QUEUED, rate_limit = $RATE_PER_S, rate_period = '1 s'
            WHERE name = 'benchr/r$r'" >/dev/null
        for ((t = 0; t < 300; t++)); do
            n=$(q "SELECT count(*) FROM sync_state WHERE name = 'sem/benchr/r$r' AND held")
            [[ $n == "$RATE_QUEUED" ]] && break
            sleep 0.1
        done
        [[ $n == "$RATE_QUEUED" ]] || die "comparison 11, round $r: $n of $RATE_QUEUED requests granted after 30 s"
        q "INSERT INTO bench_rate_delays
           SELECT $r, g.k - $RATE_PER_S,
                  extract(epoch FROM g.granted_at - (f.t1 + (g.k - $RATE_PER_S) * interval '1 s' / $RATE_PER_S)) * 1e6
             FROM (SELECT granted_at, row_number() OVER (ORDER BY token) AS k
                     FROM sync_state WHERE name = 'sem/benchr/r$r') g,
                  (SELECT min(granted_at) AS t1 FROM sync_state WHERE name = 'sem/benchr/r$r') f
            WHERE g.k > $RATE_PER_S" >/dev/null
        read -r n early p50 p99 pmax < <(q "SELECT count(*), count(*) FILTER (WHERE delay_us < 0),
                round(percentile_disc(0.5) WITHIN GROUP (ORDER BY delay_us)::numeric),
                round(percentile_disc(0.99) WITHIN GROUP (ORDER BY delay_us)::numeric),
                round(max(delay_us)::numeric) FROM bench_rate_delays WHERE round = $r" | tr '|' ' ')
        ((early == 0)) || die "comparison 11, round $r: $early grants before their token's due time"
        log "rate round $r: $n grants after the burst: delay p50 ${p50} us, p99 ${p99} us, max ${pmax} us"
        RATE_ROWS+=("| $r | $n | $p50 | $p99 | $pmax |")
        q "SELECT count(sync_release_holder(workflowkey)) FROM sync_state WHERE name = 'sem/benchr/r$r';
           DELETE FROM sync_limit WHERE name = 'benchr/r$r'" >/dev/null
    done
    read -r n p50 p99 pmax < <(q "SELECT count(*),
            round(percentile_disc(0.5) WITHIN GROUP (ORDER BY delay_us)::numeric),
            round(percentile_disc(0.99) WITHIN GROUP (ORDER BY delay_us)::numeric),
            round(max(delay_us)::numeric) FROM bench_rate_delays" | tr '|' ' ')
    RATE_ROWS+=("| **all** | **$n** | **$p50** | **$p99** | **$pmax** |")
    add_summary "11. rate-limited grant delay" "p99 over all $n grants at $RATE_PER_S/s of the delay after the token's due time, microseconds (p50 $p50)" "$p99" "<=" 2000
else
    add_summary "11. rate-limited grant delay" "p99 of the delay after the token's due time, microseconds" "n/a" "<=" 2000
fi

# --- 12. best-effort queueing: slot utilisation under a mixed workload ----------

QUEUE_CLIENTS=16     # clients on the one semaphore of 8 slots
QUEUE_ROWS=()
if want 12 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
    log "comparison 12: slot utilisation of one semaphore of 8 slots, $QUEUE_CLIENTS clients holding 5 slots (1 in 4) or 1 slot for 10 ms, strict vs best-effort queueing, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
    q "INSERT INTO sync_limit (name, sizelimit, queueing) VALUES ('benchq/pool', 8, 'strict')" >/dev/null
    declare -A QU=() QBIG=()
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

# --- 13. the cost of per-lock statistics -----------------------------------------

if want 13 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
    log "comparison 13: workload 1 with per-lock statistics counted and not, mixed in one pgbench run, $(nproc) clients, $BENCH_ROUNDS rounds of ${BENCH_SECONDS}s each"
    compare_mixed "13-counting" uncounted "$ROOT/bench/syncwf_uncounted.sql" \
        counted "$ROOT/bench/syncwf_counted.sql"
    add_summary "13. counting statistics" "median over rounds of mean latency counted / uncounted in the same pgbench run (${MIX_US[counted]} / ${MIX_US[uncounted]} us), workload 1: sync_lock_stats costs at most 1.05 x" \
        "${COST[counted]}" "<=" 1.05
else
    add_summary "13. counting statistics" "median over rounds of mean latency counted / uncounted, workload 1" "n/a" "<=" 1.05
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
    CLUSTER_SYNCWF="shared_preload_libraries = 'syncwf', syncwf.max_locks = $MAX_LOCKS, syncwf.max_entries = $MAX_ENTRIES, syncwf.max_holders = $MAX_HOLDERS, syncwf.database = '$DB' (the keyed holds and the worker live in the bench database; other syncwf settings at their defaults)"
fi
PARTIAL_NOTE=
if ((PARTIAL)); then
    ran=
    for n in 1 2 3 4 5 6 7 8 9 10 11; do want "$n" && ran+=" $n"; done
    PARTIAL_NOTE="
**Partial run** (BENCH_ONLY=\`$BENCH_ONLY\`): only comparisons$ran ran; the others are marked not run.
"
fi
PGBENCH_CMD="pgbench -n -M prepared -c $CLIENTS -j $THREADS -T $BENCH_SECONDS -f <script> $DB"

mkdir -p "$(dirname "$BENCH_OUT")"
{
cat <<EOF
# syncwf benchmarks

Written by \`make bench\` (scripts/bench.sh); do not edit by hand. Every
figure on this page comes from the run of $(date -u '+%Y-%m-%d %H:%M UTC'), which took ${ELAPSED} s.
$PARTIAL_NOTE
## What is compared

Comparisons 1 to 4 measure syncwf's session holds against PostgreSQL's own
session-level advisory locks (\`pg_advisory_lock\` / \`pg_advisory_unlock\`),
which live in the same shared-memory lock manager as table locks.
Comparisons 5 to 7 measure keyed holds (\`sync_request\` / \`sync_release\`
with a holder key, kept in the \`sync_state\` table): against a semaphore
written in plain SQL (5), at the front of a deep queue (6), and the hand-off
to a LISTENing controller (7). Comparisons 8 and 9 measure launch-plan
concurrency policies (\`sync_execution_create\` / \`sync_execution_update\`):
against the count-then-insert Flyte's admin does (8), and the hand-off of a
freed slot to a pending execution (9). Comparison 10 measures what 1.5's
capacity model costs: weighted slots, shared mutex holds and limits from a
pattern row, against the plain acquire of comparison 1; comparison 11 how
late a rate-limited semaphore grants after each token's due time; comparison 12
how much of a semaphore best-effort queueing keeps busy that a strict queue
leaves idle; comparison 13 what counting per-lock statistics costs the
acquire of comparison 1. Within a comparison the contenders
are interleaved (syncwf, advisory, syncwf, advisory, ...), after an unrecorded
warm-up of ${BENCH_WARMUP} s each, so that machine noise hits all of them; each
contender's figure is the median of its rounds (comparisons 10 and 13 mix
their contenders within each run instead: see there). One pgbench transaction is one
acquire (or request) plus one release, each its own statement (and its own
implicit transaction) unless said otherwise.

1. **Random names**: $CLIENTS clients acquire and release a random lock of
   $NAMES: \`sync_acquire('sem/bench/' || n)\` / \`sync_release(...)\`
   with \`n\` uniform in 1..$NAMES, each semaphore having a \`sync_limit\` row
   of limit 1 so it behaves like a mutex, against
   \`pg_advisory_lock(n)\` / \`pg_advisory_unlock(n)\`. Measures the
   uncontended acquire/release path. Target: syncwf at least 0.95 x advisory.
   Scripts: bench/syncwf_random.sql, bench/advisory_random.sql.
2. **One hot lock**: the same $CLIENTS clients all take turns on one mutex
   \`mtx/bench/hot\` against one advisory lock (key 42). Measures queueing and
   hand-off under full contention. Target: syncwf at least 1.0 x advisory.
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
   the p99 over all syncwf hand-offs. Target: syncwf p99 at most advisory's
   p99 in the same run.
   Advisory locks are measured the same way for reference. Script:
   bench/pingpong.sql.
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
6. **Keyed request + release at the front of a 100,000-deep queue**: $CLIENTS
   clients, each pgbench transaction
   \`SELECT 1 / (status = 'held')::integer FROM sync_request('$DEEP_LOCK', holder)\`
   then \`SELECT sync_release('$DEEP_LOCK', holder)\` with a new holder key
   each time, priority 0 (bench/keyed_deep.sql; the semaphore's limit is
   $CLIENTS, one slot per client, and a request that is not granted at once
   is a division by zero that stops the benchmark), with no other request
   for the semaphore (E) and with $DEEP keyed requests queued on it (F).
   The queued requests must stay queued while the measured ones are granted
   at the front, with free slots: each is a two-lock request
   \`sync_request(ARRAY['$DEEP_LOCK', '$DEEP_BLOCK'], 'bench/deep/q<g>', priority => g - $((DEEP + 1)))\`,
   \`g\` in 1..$DEEP, while another keyed holder, \`bench/deep/blocker\`,
   holds \`$DEEP_BLOCK\` in both E and F. A multi-lock request is granted
   only when it fronts all its queues and every lock has a slot, so they are
   never granted, and they are active entries of the queue (an entry of an
   inactive controller would instead be moved out of the queue to a dormant
   list, which would not test the queue). Their priorities (-$DEEP..-1, below
   the measured requests' 0) put every measured request at the front,
   ahead of all $DEEP; each new one goes in at the head of the queue, so the
   setup costs $DEEP queue insertions at the head instead of walks to the
   tail. Before measuring, \`sync_locks\` must show 0 holders and $DEEP
   waiters for \`$DEEP_LOCK\`, and \`sync_waiters\` positions 1..$DEEP, all
   active; after every F round the $DEEP are still queued. The queue is
   emptied with \`TRUNCATE sync_state\` (and the blocker requests again)
   before an E round, and \`sync_state\` is vacuumed after each change. Rounds
   in the order \`$BENCH_DEEP_ORDER\`. Target: median tps empty / deep at most
   1.3.
7. **Keyed hand-off latency**: a C client (bench/keyed_handoff.c, libpq) with
   two connections. The mutex \`mtx/bench/handoff\` is held by keyed holder
   \`bench/ho/a\`, and \`bench/ho/b\` has requested it (pending, committed);
   connection L has run \`LISTEN syncwf\`. One hand-off: connection R calls
   \`sync_release('mtx/bench/handoff', 'bench/ho/a')\` (autocommit), and L
   waits for the NOTIFY \`{"event": "granted", ..., "holder": "bench/ho/b", ...}\`;
   then R requests the lock again for \`bench/ho/a\` (pending) and the roles
   swap. Latency: from just before R sends the release until L has read the
   notification, on one monotonic clock; it covers the release, which at its
   pre-commit reserves the pending entry, writes its grant to \`sync_state\`
   and queues the NOTIFY, the release's commit, which hands the slot over
   and sends the NOTIFY, and the delivery to L. Any other notification
   fails the run.
   The same hand-offs again with \`sync_wait\` instead of LISTEN: before
   each one, L sends \`SELECT sync_wait('mtx/bench/handoff', 'bench/ho/b')\`
   and R sends the release only once L's backend sleeps in it
   (\`pg_stat_activity\`: wait event type \`Extension\`); the hand-off ends
   when L has the token. It covers the release and its commit (which writes
   the grant, as above), the wake-up of the waiting backend, and the result
   reaching L.
   $BENCH_LAT_ROUNDS rounds of $BENCH_KEYED_HANDOFFS recorded hand-offs (after $HO_WARMUP unrecorded ones)
   of each, interleaved (LISTEN, \`sync_wait\`, reference) with a plain-SQL
   reference (bench/keyed_setup.sql): the same
   protocol on a table, where the releasing transaction itself deletes its
   row, marks the oldest pending row held and sends the NOTIFY (channel
   \`bench_ho\`): one commit per hand-off, as syncwf's. Targets,
   over all hand-offs: to LISTEN, syncwf's p50 and p99 each at most the
   reference's in the same run; to \`sync_wait\`, the p99 at most 5 ms.
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
9. **Launch-plan slot hand-off latency**: a C client
   (bench/launch_handoff.c, libpq) with two connections, on launch plan
   \`bench/dev/lp9\` version \`v1\` (WAIT, max_concurrency 1). One execution
   holds the slot and is RUNNING; connection L has run
   \`LISTEN syncwf_launch\`. One hand-off: connection R creates the next
   execution (PENDING, committed), then calls
   \`sync_execution_update(<the running one>, 'SUCCEEDED')\` (autocommit), and
   L waits for the NOTIFY
   \`{"event": "promoted", "execution_id": <the pending one>, ...}\`.
   Latency: from just before R sends the update until L has read the
   notification, on one monotonic clock; it covers the update, which at its
   pre-commit writes the pending execution's grant to \`sync_state\`, sets
   the execution QUEUED, records the PROMOTED event and queues the NOTIFY,
   its commit, which releases the slot to that execution and sends the
   NOTIFY, and the delivery to L. After each hand-off (untimed) R
   checks that \`sync_execution\` has the promoted execution QUEUED and moves
   it to RUNNING; after each round exactly one PROMOTED event per hand-off
   must be recorded and no execution of the plan may be live; any other
   notification fails the run. $BENCH_LAT_ROUNDS rounds of
   $BENCH_LAUNCH_HANDOFFS recorded hand-offs (after $LO_WARMUP unrecorded
   ones); the verdict is on the p99 over all of them. Target: at most
   comparison 7's p99 to a LISTEN connection in the same run.
   There is no reference contender: Flyte's RFC has a controller poll for
   pending executions, so its hand-off takes up to the polling interval.
10. **The capacity model on random names**: workload 1's plain acquire and
   release (\`plain\`, bench/syncwf_random.sql) against three variants:
   \`weighted\` takes 3 of the 4 slots
   of a random semaphore among $NAMES (\`sync_acquire('sem/benchw/' || n,
   slots => 3)\`, rows \`'benchw/<n>'\` of limit 4,
   bench/syncwf_weighted.sql); \`shared\` a shared hold of a random mutex
   (\`sync_acquire('mtx/bench/' || n, mode => 'shared')\`,
   bench/syncwf_shared.sql); \`pattern\` a random semaphore whose limit 1
   comes from the pattern row \`'benchp/*'\` instead of a row of its own
   (bench/syncwf_pattern.sql). Before the rounds, every semaphore of the
   three namespaces is acquired and released once, so that each is cached
   with its limit (a pattern's or its own row's) and the rounds compare
   the steady state.
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
   verdict is on the median of $BENCH_ROUNDS rounds of ${BENCH_SECONDS} s. A fifth
   contender, \`calibration\`, is the plain acquire plus an md5 over
   ~1.5 kB in the same statement (bench/syncwf_calibration.sql): its ratio,
   for information, shows how large a difference the method reports, and
   its rounds how steady that is. Target for each contender: cost at most
   1.1 x the plain acquire's.
11. **Rate-limited grants**: semaphore \`sem/benchr/r<round>\` is paused
   (\`sizelimit\` 0) while $RATE_QUEUED keyed requests are queued on it
   (\`sync_request\`, one statement); then one \`UPDATE sync_limit\` gives
   it room for all of them and a rate of $RATE_PER_S per second
   (\`rate_limit\` $RATE_PER_S, \`rate_period\` 1 s). At that commit the
   bucket is full: the first $RATE_PER_S are granted at once, the first of
   them at t1, and the bucket is then empty. From there on the k-th token
   is due at exactly t1 + k / $RATE_PER_S s (the bucket is a GCRA,
   src/rate_limits.c), and each grant's delay is its
   \`sync_state.granted_at\` (the moment the grant happened in shared
   memory, whoever wrote the row later) minus the due time of its token,
   the grants taken in fencing-token order. The rate worker grants them: it
   sleeps until the next due time (on its latch with a timeout in whole
   milliseconds, the rest of the last millisecond in \`pg_usleep\`), and
   never polls. A grant before its due time fails the run.
   $BENCH_LAT_ROUNDS rounds; target: p99 of the delay at most 2 ms.
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
13. **Counting statistics**: workload 1 (random semaphores of limit 1,
   cached) with \`syncwf.track_stats\` on and off, the two contenders mixed
   in one pgbench run as in comparison 10, one client per CPU,
   $BENCH_ROUNDS rounds of ${BENCH_SECONDS} s. Each acquire statement also
   calls \`set_config('syncwf.track_stats', ...)\` (on or off), so that both
   pay for it alike. With the default \`syncwf.stats_max_locks\` (1,000)
   most of the $NAMES names count in the one namespace row
   \`sem/bench/*\`: the atomic additions of every client meet on one row,
   the costly case. Target: counted at most 1.05 x uncounted.
   Scripts: bench/syncwf_counted.sql, bench/syncwf_uncounted.sql.

## How to reproduce

\`\`\`
make bench                    # BENCH_SECONDS=N to change the length of each run
BENCH_ONLY=keyed make bench   # only comparisons 5-7 (engine: 1-4 and 10-13, launch: 8-9,
                              # or numbers, e.g. BENCH_ONLY="1 5"); a partial
                              # run writes .bench/benchmarks.md
SYNCWF_NO_BUILD=1 make bench  # benchmark the syncwf already installed
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
| pgbench | \`$PGBENCH_CMD\`, $BENCH_ROUNDS rounds per contender (comparisons 1, 2, 5, 8), warm-up ${BENCH_WARMUP} s per contender |
| pgbench, mixed (comparison 10) | \`pgbench -n -M prepared -c $(nproc) -j $(nproc) -T $BENCH_SECONDS -l -f <script>@1 ...\` (one client per CPU, a script picked at random per transaction), $BENCH_ROUNDS rounds, warm-up ${BENCH_WARMUP} s |
| tps | pgbench's "tps ... without initial connection time" |

## Results

| comparison | figure | value | target | verdict |
| --- | --- | --- | --- | --- |
$(printf '%s\n' "${SUMMARY[@]}")

### Throughput per round (tps)

Spread is the fastest round over the slowest round of the same contender: how
much the machine's own noise moved the figures during this run. Comparison
10's rows are mean latencies in microseconds instead, and their last column
the contender's cost over \`plain\`'s in each round.

| comparison | contender | rounds in run order | median | spread (max / min) |
| --- | --- | --- | --- | --- |
$(printf '%s\n' "${ROUND_ROWS[@]}")
EOF
if ((${#RATE_ROWS[@]} > 0)); then
cat <<EOF

### Rate-limited grant delay, comparison 11 (microseconds)

Each grant's delay after its token's due time: rounds in run order, then
all rounds together (bold).

| round | grants | p50 | p99 | max |
| --- | --- | --- | --- | --- |
$(printf '%s\n' "${RATE_ROWS[@]}")
EOF
fi
if ((${#QUEUE_ROWS[@]} > 0)); then
cat <<EOF

### Slot utilisation, comparison 12

Per round and mode: utilisation of the 8 slots, then for the 5-slot and
1-slot transactions how many completed and their latency (wait, hold and
release) in milliseconds.

| round | queueing | utilisation | 5-slot done | 5-slot p99 | 5-slot max | 1-slot done | 1-slot p99 |
| --- | --- | --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${QUEUE_ROWS[@]}")
EOF
fi
if ((${#LAT_ROWS[@]} > 0)); then
cat <<EOF

### Hand-off latency, comparison 3 (microseconds)

Rounds in run order, then all rounds of a lock together (bold).

| lock | round | hand-offs | acquires | p50 | p99 | max |
| --- | --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${LAT_ROWS[@]}")
EOF
fi
if ((${#HO_ROWS[@]} > 0)); then
cat <<EOF

### Keyed hand-off latency, comparison 7 (microseconds)

Hand-off: from just before \`sync_release\` is sent until the pending
holder's LISTEN connection has the "granted" notification (LISTEN, plain
SQL), or until its blocked \`sync_wait\` has returned the token
(\`sync_wait\`). Release call: until
the releasing connection has the result of its call (its commit done). Rounds
in run order, then all rounds of a contender together (bold).

| contender | round | hand-offs | p50 | p99 | max | release call p50 |
| --- | --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${HO_ROWS[@]}")
EOF
fi
if ((${#LO_ROWS[@]} > 0)); then
cat <<EOF

### Launch-plan slot hand-off latency, comparison 9 (microseconds)

Hand-off: from just before the terminal \`sync_execution_update\` is sent
until the LISTEN connection has the pending execution's "promoted"
notification. Update call: until the updating connection has the result of
its call (its commit done). Rounds in run order, then all rounds together
(bold).

| round | hand-offs | p50 | p99 | max | update call p50 |
| --- | --- | --- | --- | --- | --- |
$(printf '%s\n' "${LO_ROWS[@]}")
EOF
fi
if ((${#LAUNCH_ROWS[@]} > 0)); then
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
fi
if ((${#DEEP_ROWS[@]} > 0)); then
cat <<EOF

### The deep queue (comparison 6)

| step | what | seconds (wall clock, psql) |
| --- | --- | --- |
$(printf '%s\n' "${DEEP_ROWS[@]}")
EOF
fi
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
