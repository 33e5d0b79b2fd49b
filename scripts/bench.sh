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
# rate-limited grants (11), best-effort queueing's slot utilisation (12),
# the cost of per-lock statistics (13), server instructions per call
# under callgrind (14), keyed requests joining a queue 1,000 and
# 1,000,000 deep (15), shared memory at start and with 2,000,000 locks
# (16), workloads 1 and 4 against the build before memory grew with use
# (17), and how soon a request within its child's guaranteed share of a
# full parent is granted (18).  Contenders are interleaved
# within the run (A, B, A, B, ...) so machine noise hits all of them; the
# median of each contender is reported.  Comparisons 10 and 13, whose
# contenders differ by a few percent at most, go further: they share one
# pgbench run, a script picked at random per transaction.  The
# results table is printed and written to docs/benchmarks.md; every figure in
# that file comes from this run.
#
# Layout.  This script reads the environment, picks the comparisons
# (BENCH_ONLY) and runs the steps in order; the code lives in bench/:
#   bench/lib/cluster.sh  packages, build and install, the throwaway cluster
#                         and the bench database; q, wait_idle, cleanup
#   bench/lib/measure.sh  pgbench runs and their figures: run_pgbench,
#                         compare_ab, compare_mixed, median, ratio, and
#                         add_summary, a row of the summary table
#   bench/lib/keyed.sh    helpers of the keyed and launch-plan comparisons
#   bench/lib/report.sh   write_report, the report
#   bench/lib/callgrind.sh  instructions per call in a stand-alone backend
#                         under callgrind (comparison 14)
#   bench/cmp/NN_*.sh     comparison NN, one file each, run in the order of
#                         NN; it defines cmpN_run (runs the comparison when
#                         BENCH_ONLY selects it and adds its summary rows, "not
#                         run" otherwise) and cmpN_describe (its item in the
#                         report's "What is compared"), and where it needs them
#                         cmpN_setup (called while the database is set up)
#                         and cmpN_details (its section at the end of the
#                         report); N is NN without its leading zero
#   bench/*.sql, *.c      the pgbench scripts, SQL set-up and libpq clients
# Every file is sourced at the top level, so their variables are global: the
# report reads what the comparisons leave.  docs/development.md says how to
# add a comparison.
#
# Environment:
#   BENCH_ONLY         comparisons to run: "all" (default), "engine" (1-4, 10-14, 16-19),
#                      "keyed" (5-7, 15), "launch" (8-9) or numbers, e.g. "5 7"
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
#   BENCH_LAT_ROUNDS   rounds per contender in comparisons 3, 7, 9 and 18,
#                      interleaved (default 3)
#   BENCH_DEEP_ORDER   order of empty/deep rounds in comparison 6 (default
#                      "E F E F E F E F"); every F after an E queues 100,000
#                      keyed requests again (a few seconds each)
#   BENCH_KEYED_HANDOFFS  hand-offs per round in comparison 7 (default 1000)
#   BENCH_LAUNCH_HANDOFFS hand-offs per round in comparison 9 (default 1000)
#   BENCH_WARMUP       seconds of unrecorded warm-up per contender (default 2)
#   BENCH_DEPTH        requests of the deep queue of comparison 15 (default
#                      1000000)
#   BENCH_MEM_LOCKS    locks of comparison 16 (default 2000000)
#   BENCH_BASELINE     the commit comparison 17 compares with (default
#                      6ca4848, the last with fixed-size tables)
#   BENCH_BASE_FILL    live locks of comparison 17's second case (default
#                      1000000)
#   BENCH_CALLGRIND_N  pairs of the shorter run of comparison 14 (default
#                      1000; the longer runs three times as many)
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

# The comparisons: bench/cmp/NN_<name>.sh is comparison NN (see Layout)
CMP_FILES=("$ROOT"/bench/cmp/[0-9][0-9]_*.sh)
[[ -f ${CMP_FILES[0]} ]] || die "no comparison in $ROOT/bench/cmp/"
CMPS=()
for f in "${CMP_FILES[@]}"; do
    f=${f##*/}
    [[ " ${CMPS[*]} " != *" $((10#${f%%_*})) "* ]] || die "bench/cmp/: two files for comparison $((10#${f%%_*}))"
    CMPS+=("$((10#${f%%_*}))")
done

# BENCH_ONLY -> the set of comparisons to run
RUN=" "
for w in ${BENCH_ONLY//,/ }; do
    case $w in
    all) RUN+="${CMPS[*]} " ;;
    engine) RUN+="1 2 3 4 10 11 12 13 14 16 17 18 19 " ;;
    keyed) RUN+="5 6 7 15 " ;;
    launch) RUN+="8 9 " ;;
    *)
        [[ $w =~ ^[1-9][0-9]*$ && " ${CMPS[*]} " == *" $w "* ]] ||
            die "BENCH_ONLY: unknown word '$w' (use all, engine, keyed, launch or numbers ${CMPS[0]}-${CMPS[-1]})"
        RUN+="$w "
        ;;
    esac
done
want() { [[ $RUN == *" $1 "* ]]; }
PARTIAL=0
for n in "${CMPS[@]}"; do want "$n" || PARTIAL=1; done
[[ $RUN == " " ]] && die "BENCH_ONLY selects no comparison"

if [[ $BENCH_SKIP_SYNCWF == 1 || $PARTIAL == 1 ]]; then
    BENCH_OUT=${BENCH_OUT:-$BENCH_DIR/benchmarks.md}
else
    BENCH_OUT=${BENCH_OUT:-$ROOT/docs/benchmarks.md}
fi

CLIENTS=8
THREADS=2
NAMES=100000          # sync_limit rows bench/1..bench/N, range of random keys
KEYED_SEMS=1000       # comparison 5: semaphores sem/bench/k1..k<N>
KEYED_LIMIT=2         # ... and their limit
MAX_LOCKS=1100000
MAX_ENTRIES=1200000
MAX_HOLDERS=1100000   # comparison 15 queues 1,000,000 holder keys
# (the sizes of a single comparison are in its file in bench/cmp/)

for v in BENCH_SECONDS BENCH_ROUNDS BENCH_HANDOFFS BENCH_LAT_ROUNDS BENCH_WARMUP BENCH_KEYED_HANDOFFS BENCH_LAUNCH_HANDOFFS; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer"
done
((BENCH_SECONDS > 0 && BENCH_ROUNDS > 0 && BENCH_LAT_ROUNDS > 0 && BENCH_HANDOFFS > 1 && BENCH_KEYED_HANDOFFS > 0 && BENCH_LAUNCH_HANDOFFS > 0)) ||
    die "BENCH_SECONDS, BENCH_ROUNDS, BENCH_LAT_ROUNDS, BENCH_KEYED_HANDOFFS, BENCH_LAUNCH_HANDOFFS must be > 0 and BENCH_HANDOFFS > 1"

T0=$SECONDS
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# scripts/common.sh (shared with setup.sh and test.sh) provides
# ensure_packages, ensure_pg_user (PG_OS_USER, SYNCWF_PG_USER to change),
# as_pg (run as that user when we are root), load_pg_paths (PG_BINDIR) and
# build_and_install (clean build with -Werror, then make install).

# shellcheck source=scripts/common.sh
source "$ROOT/scripts/common.sh"
# our own log/die (common.sh has its own), defined after sourcing it
log() { printf '[bench %s +%ss] %s\n' "$(date +%H:%M:%S)" "$((SECONDS - T0))" "$*" >&2; }
die() { printf '[bench] ERROR: %s\n' "$*" >&2; exit 1; }

# --- the bench library and the comparisons ----------------------------------
# Definitions only; sourced here, at the top level, so that their variables
# are global.

# shellcheck source=bench/lib/cluster.sh
source "$ROOT/bench/lib/cluster.sh"
# shellcheck source=bench/lib/measure.sh
source "$ROOT/bench/lib/measure.sh"
# shellcheck source=bench/lib/keyed.sh
source "$ROOT/bench/lib/keyed.sh"
# shellcheck source=bench/lib/report.sh
source "$ROOT/bench/lib/report.sh"
# shellcheck source=bench/lib/callgrind.sh
source "$ROOT/bench/lib/callgrind.sh"
for f in "${CMP_FILES[@]}"; do
    # shellcheck source=/dev/null
    source "$f"
done
for n in "${CMPS[@]}"; do
    for f in run describe; do
        declare -F "cmp${n}_$f" >/dev/null || die "bench/cmp/: comparison $n defines no cmp${n}_$f"
    done
done

# --- the run ----------------------------------------------------------------

bench_install       # packages, the unprivileged user, build and install
bench_cluster       # the throwaway cluster, stopped on exit
bench_database      # the bench database, with each comparison's cmpN_setup

for cmp_n in "${CMPS[@]}"; do
    "cmp${cmp_n}_run"
done

check_server_log
write_report

echo
cat "$BENCH_OUT"
echo
log "done in ${ELAPSED} s; report written to ${BENCH_OUT#"$ROOT"/}; $MISSES target(s) missed"
if [[ $BENCH_STRICT == 1 ]] && ((MISSES > 0)); then
    exit 1
fi
exit 0
