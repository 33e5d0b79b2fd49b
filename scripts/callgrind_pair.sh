#!/usr/bin/env bash
# scripts/callgrind_pair.sh: server instructions per acquire+release pair,
# counted by valgrind's callgrind, so that two builds can be compared where
# pgbench's throughput swings more than the difference (make bench,
# comparison 1, moves by up to 25% between runs on a shared 2-CPU machine).
#
#   bash scripts/callgrind_pair.sh [LIB.so ...]
#
# For each library given (default: the syncwf.so installed in pg_config's
# pkglibdir), it installs it in turn, then runs a stand-alone backend
# (postgres --single, syncwf preloaded, in a throwaway data directory) under
# callgrind twice, with N and 3N prepared EXECUTEs of sync_acquire('mtx/b/x')
# followed by sync_release('mtx/b/x') (one existing session mutex, each
# statement its own transaction, as pgbench runs them; bench/lib/callgrind.sh
# has the runner and the statements, shared with make bench's comparison 14), and
# prints the marginal instructions per pair, (I(3N) - I(N)) / 2N, which
# leaves out start-up and the first use of the lock. It does the same for
# pg_advisory_lock/pg_advisory_unlock and for a trivial pair of
# SELECT 1 + $1, and prints each figure beyond the trivial pair. The
# library installed at the start is put back at the end.
#
# A stand-alone backend prints every result row as debug output, and that
# work is part of every pair: the figures compare builds of syncwf exactly,
# but they are not the figures of a backend behind a client connection,
# and the gap to advisory locks here is not the one to quote.
#
# Environment: PG_CONFIG (default: PostgreSQL 15's), CALLGRIND_N (default
# 1000), SYNCWF_PG_USER (the OS user the backend runs as; postgres).
# Needs root (it installs the libraries) and valgrind.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

N=${CALLGRIND_N:-1000}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib/callgrind.sh
source "$ROOT/bench/lib/callgrind.sh"
load_pg_paths
LIBDIR="$("$PG_CONFIG" --pkglibdir)"
is_root || die "run as root: the libraries are installed in $LIBDIR"
ensure_pg_user

WORK="$(mktemp -d /tmp/syncwf-callgrind.XXXXXX)"
chown "$PG_OS_USER:" "$WORK"
cp "$LIBDIR/syncwf.so" "$WORK/installed.so"
trap 'cp "$WORK/installed.so" "$LIBDIR/syncwf.so"; rm -rf "$WORK"' EXIT
cg_init "$WORK/cg"

TRIVIAL=$(cg_per_pair "$WORK/cg" cg_trivial "$N")
ADVISORY=$(cg_per_pair "$WORK/cg" cg_advisory_same "$N")
printf '%-56s %10s %15s\n' "contender" "per pair" "beyond trivial"
printf '%-56s %10d %15s\n' "SELECT 1 + \$1, twice" "$TRIVIAL" "-"
printf '%-56s %10d %15d\n' "pg_advisory_lock + pg_advisory_unlock" "$ADVISORY" $((ADVISORY - TRIVIAL))
libs=("$@")
((${#libs[@]})) || libs=("$WORK/installed.so")
for lib in "${libs[@]}"; do
    [[ -f "$lib" ]] || die "no such library: $lib"
    cp "$lib" "$LIBDIR/syncwf.so"
    p=$(cg_per_pair "$WORK/cg" cg_syncwf_same "$N")
    printf '%-56s %10d %15d\n' "sync_acquire + sync_release, $lib" "$p" $((p - TRIVIAL))
done
