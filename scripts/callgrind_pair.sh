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
# followed by sync_release('mtx/b/x') (one existing session mutex), and
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
BINDIR="$("$PG_CONFIG" --bindir)"
LIBDIR="$("$PG_CONFIG" --pkglibdir)"
command -v valgrind >/dev/null || apt_install valgrind
is_root || die "run as root: the libraries are installed in $LIBDIR"
ensure_pg_user

WORK="$(mktemp -d /tmp/syncwf-callgrind.XXXXXX)"
chown "$PG_OS_USER:" "$WORK"
cp "$LIBDIR/syncwf.so" "$WORK/installed.so"
trap 'cp "$WORK/installed.so" "$LIBDIR/syncwf.so"; rm -rf "$WORK"' EXIT

as_pg "$BINDIR/initdb" -D "$WORK/data" -U postgres -A trust --no-sync >/dev/null
printf "shared_preload_libraries = 'syncwf'\nsyncwf.database = 'postgres'\n" \
    | as_pg tee -a "$WORK/data/postgresql.conf" >/dev/null

# instructions KIND COUNT: total instructions of one backend run
instructions() {
    local kind=$1 n=$2 in="$WORK/$1-$2.sql" out i
    {
        echo "CREATE EXTENSION IF NOT EXISTS syncwf;"
        case $kind in
            syncwf)
                echo "PREPARE a(text) AS SELECT sync_acquire(\$1);"
                echo "PREPARE r(text) AS SELECT sync_release(\$1);"
                for ((i = 0; i < n; i++)); do echo "EXECUTE a('mtx/b/x'); EXECUTE r('mtx/b/x');"; done ;;
            advisory)
                echo "PREPARE a(bigint) AS SELECT pg_advisory_lock(\$1);"
                echo "PREPARE r(bigint) AS SELECT pg_advisory_unlock(\$1);"
                for ((i = 0; i < n; i++)); do echo "EXECUTE a(42); EXECUTE r(42);"; done ;;
            trivial)
                echo "PREPARE a(int) AS SELECT 1 + \$1;"
                for ((i = 0; i < n; i++)); do echo "EXECUTE a(1); EXECUTE a(2);"; done ;;
        esac
    } >"$in"
    out="$WORK/cg-$kind-$n"
    as_pg valgrind --tool=callgrind --callgrind-out-file="$out.%p" \
        "$BINDIR/postgres" --single -D "$WORK/data" postgres <"$in" >"$WORK/$kind-$n.log" 2>&1 \
        || { tail -n 20 "$WORK/$kind-$n.log" >&2; die "the $kind run failed"; }
    grep -h '^summary:' "$out".* | awk '{ s += $2 } END { print s }'
    rm -f "$out".*
}
# per_pair KIND: marginal instructions per pair
per_pair() {
    local a b
    a=$(instructions "$1" "$N")
    b=$(instructions "$1" $((3 * N)))
    echo $(((b - a) / (2 * N)))
}

# a first run creates the extension, so that none of the measured ones does
instructions trivial 1 >/dev/null
TRIVIAL=$(per_pair trivial)
ADVISORY=$(per_pair advisory)
printf '%-56s %10s %15s\n' "contender" "per pair" "beyond trivial"
printf '%-56s %10d %15s\n' "SELECT 1 + \$1, twice" "$TRIVIAL" "-"
printf '%-56s %10d %15d\n' "pg_advisory_lock + pg_advisory_unlock" "$ADVISORY" $((ADVISORY - TRIVIAL))
libs=("$@")
((${#libs[@]})) || libs=("$WORK/installed.so")
for lib in "${libs[@]}"; do
    [[ -f "$lib" ]] || die "no such library: $lib"
    cp "$lib" "$LIBDIR/syncwf.so"
    p=$(per_pair syncwf)
    printf '%-56s %10d %15d\n' "sync_acquire + sync_release, $lib" "$p" $((p - TRIVIAL))
done
