# shellcheck shell=bash
# bench/lib/callgrind.sh: server instructions per call, counted by valgrind's
# callgrind in a stand-alone backend (postgres --single), so that costs can
# be compared where pgbench's throughput swings more than the difference.
# Used by comparison 14 (bench/cmp/14_callgrind.sh) and by
# scripts/callgrind_pair.sh.
#
#   cg_init DIR            a throwaway data directory DIR/data, as the
#                          unprivileged user, with syncwf preloaded
#                          (syncwf.database = 'postgres'), the extension
#                          created and the tables of comparison 5 loaded
#                          (bench/keyed_setup.sql), with KEYED_SEMS
#                          semaphores sem/bench/k<n> of limit KEYED_LIMIT in
#                          sync_limit and in bench_sem_limit, and the rows of
#                          the semaphores of comparison 14's nested pair:
#                          'bench/1' (limit 1), the pattern 'benchn/*'
#                          (limit 1) and its parent 'benchnp/all' (1000000)
#   cg_per_pair DIR GEN N [MODE]
#                          marginal instructions per pair: the backend runs
#                          once with the statements "GEN N" prints, once
#                          with those of "GEN 3N", and the figure is
#                          (I(3N) - I(N)) / 2N, which leaves out start-up,
#                          the PREPAREs and the first use of anything.
#                          MODE "apart" (default): each statement a line,
#                          its own transaction, as in a pgbench script;
#                          "together": the two EXECUTEs of a pair on one
#                          line, one transaction, so that the pair's figure
#                          is the calls' own work and one transaction's
#
# GEN is a function that prints, for its argument COUNT, PREPAREs then
# COUNT pairs of EXECUTEs, one statement a line; the cg_<contender>
# functions at the end are the contenders of comparison 14. A stand-alone backend
# prints every result row as debug output, and that work is part of every
# pair alike: the figures compare contenders and builds exactly, but they
# are not the figures of a backend behind a client connection.
#
# Needs as_pg and PG_OS_USER (scripts/common.sh) and PG_BINDIR.

cg_init() {
    local dir=$1 sock
    command -v valgrind >/dev/null || apt_install valgrind
    rm -rf "$dir"
    mkdir -p "$dir"
    chown "$PG_OS_USER:" "$dir"
    as_pg "$PG_BINDIR/initdb" -D "$dir/data" -U postgres -A trust --no-sync >/dev/null
    sock="$dir/data"
    printf "%s\n" "shared_preload_libraries = 'syncwf'" "syncwf.database = 'postgres'" \
        "listen_addresses = ''" "unix_socket_directories = '$sock'" \
        | as_pg tee -a "$dir/data/postgresql.conf" >/dev/null
    as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -w -l "$dir/setup.log" start >/dev/null
    as_pg "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -U postgres -d postgres \
        -c "CREATE EXTENSION syncwf" -f "$ROOT/bench/keyed_setup.sql" \
        -c "INSERT INTO sync_limit SELECT 'bench/k' || g, ${KEYED_LIMIT:-2} FROM generate_series(1, ${KEYED_SEMS:-1000}) g" \
        -c "INSERT INTO bench_sem_limit SELECT 'sem/bench/k' || g, ${KEYED_LIMIT:-2} FROM generate_series(1, ${KEYED_SEMS:-1000}) g" \
        -c "INSERT INTO sync_limit (name, sizelimit) VALUES ('bench/1', 1), ('benchnp/all', 1000000);
            INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('benchn/*', 1, 'benchnp/all')" \
        -c "CHECKPOINT" >/dev/null
    as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -w -m fast stop >/dev/null
}

# cg_count DIR NAME: total instructions of one stand-alone backend reading
# DIR/NAME.sql (every process it forks included)
cg_count() {
    local dir=$1 name=$2 out="$1/cg-$2"
    as_pg valgrind --tool=callgrind --callgrind-out-file="$out.%p" \
        "$PG_BINDIR/postgres" --single -D "$dir/data" postgres \
        <"$dir/$name.sql" >"$dir/$name.log" 2>&1 ||
        { tail -n 20 "$dir/$name.log" >&2; die "the callgrind run $name failed"; }
    if grep -q 'ERROR:' "$dir/$name.log"; then
        grep -m 3 'ERROR:' "$dir/$name.log" >&2
        die "the callgrind run $name reported errors (see $dir/$name.log)"
    fi
    grep -h '^summary:' "$out".* | awk '{ s += $2 } END { print s }'
    rm -f "$out".*
}

cg_per_pair() {
    local dir=$1 gen=$2 n=$3 mode=${4:-apart} a b c
    for c in "$n" $((3 * n)); do
        if [[ $mode == together ]]; then
            "$gen" "$c" | awk '/^EXECUTE/ { if (p != "") { print p " " $0; p = "" } else p = $0; next } { print }'
        else
            "$gen" "$c"
        fi >"$dir/$gen-$mode-$c.sql"
    done
    a=$(cg_count "$dir" "$gen-$mode-$n")
    b=$(cg_count "$dir" "$gen-$mode-$((3 * n))")
    echo $(((b - a) / (2 * n)))
}

# the statements of each contender, for COUNT pairs (one statement a line:
# each its own transaction, as in a pgbench script)
cg_trivial() {
    local i
    echo 'PREPARE a(int) AS SELECT 1 + $1;'
    for ((i = 0; i < $1; i++)); do printf 'EXECUTE a(1);\nEXECUTE a(2);\n'; done
}
cg_advisory_same() {
    local i
    echo 'PREPARE a(bigint) AS SELECT pg_advisory_lock($1);'
    echo 'PREPARE r(bigint) AS SELECT pg_advisory_unlock($1);'
    for ((i = 0; i < $1; i++)); do printf 'EXECUTE a(42);\nEXECUTE r(42);\n'; done
}
cg_syncwf_same() {
    local i
    echo 'PREPARE a(text) AS SELECT sync_acquire($1);'
    echo 'PREPARE r(text) AS SELECT sync_release($1);'
    for ((i = 0; i < $1; i++)); do printf "EXECUTE a('mtx/b/x');\nEXECUTE r('mtx/b/x');\n"; done
}
cg_advisory_new() {
    local i
    echo 'PREPARE a(bigint) AS SELECT pg_advisory_lock($1);'
    echo 'PREPARE r(bigint) AS SELECT pg_advisory_unlock($1);'
    for ((i = 0; i < $1; i++)); do printf 'EXECUTE a(%d);\nEXECUTE r(%d);\n' "$((1000000 + i))" "$((1000000 + i))"; done
}
cg_syncwf_new() {
    local i
    echo 'PREPARE a(text) AS SELECT sync_acquire($1);'
    echo 'PREPARE r(text) AS SELECT sync_release($1);'
    for ((i = 0; i < $1; i++)); do printf "EXECUTE a('mtx/b/n%d');\nEXECUTE r('mtx/b/n%d');\n" "$i" "$i"; done
}
cg_keyed() {
    local i
    echo 'PREPARE k(text, text) AS SELECT status FROM sync_request($1, $2);'
    echo 'PREPARE r(text, text) AS SELECT sync_release($1, $2);'
    for ((i = 0; i < $1; i++)); do
        printf "EXECUTE k('sem/bench/k%d', 'bench/h%d');\nEXECUTE r('sem/bench/k%d', 'bench/h%d');\n" \
            "$((i % 1000 + 1))" "$i" "$((i % 1000 + 1))" "$i"
    done
}
# comparison 5's table semaphore (bench/table_semaphore.sql), its count and
# insert in one statement: one statement fewer than the pgbench script
cg_table() {
    local i
    echo 'PREPARE l(text) AS SELECT pg_advisory_xact_lock(hashtext($1));'
    echo 'PREPARE i(text, text) AS INSERT INTO bench_sem (name, holder) SELECT $1, $2 WHERE (SELECT count(*) FROM bench_sem WHERE name = $1) < (SELECT sizelimit FROM bench_sem_limit WHERE name = $1);'
    echo 'PREPARE d(text, text) AS DELETE FROM bench_sem WHERE name = $1 AND holder = $2;'
    for ((i = 0; i < $1; i++)); do
        printf "BEGIN; EXECUTE l('sem/bench/k%d'); EXECUTE i('sem/bench/k%d', 'bench/h%d'); COMMIT;\nEXECUTE d('sem/bench/k%d', 'bench/h%d');\n" \
            "$((i % 1000 + 1))" "$((i % 1000 + 1))" "$i" "$((i % 1000 + 1))" "$i"
    done
}

# the same pairs as one statement over generate_series: the calls' own
# cost, with no statement, plan or transaction around each pair (a
# volatile column survives the unused-column pruning of the subquery; the
# trivial one's are pruned, leaving the cost of the rows themselves)
cg_inline_trivial() {
    echo "SELECT count(*) FROM (SELECT 1 + g AS a, 2 + g AS b FROM generate_series(1, $1) g OFFSET 0) s;"
}
cg_inline_advisory_same() {
    echo "SELECT count(*) FROM (SELECT pg_advisory_lock(42) AS a, pg_advisory_unlock(42) AS b FROM generate_series(1, $1) g OFFSET 0) s;"
}
cg_inline_syncwf_same() {
    echo "SELECT count(*) FROM (SELECT sync_acquire('mtx/b/x') AS a, sync_release('mtx/b/x') AS b FROM generate_series(1, $1) g OFFSET 0) s;"
}
cg_inline_advisory_new() {
    echo "SELECT count(*) FROM (SELECT pg_advisory_lock(1000000 + g) AS a, pg_advisory_unlock(1000000 + g) AS b FROM generate_series(1, $1) g OFFSET 0) s;"
}
cg_inline_syncwf_new() {
    echo "SELECT count(*) FROM (SELECT sync_acquire('mtx/b/n' || g) AS a, sync_release('mtx/b/n' || g) AS b FROM generate_series(1, $1) g OFFSET 0) s;"
}
# one existing semaphore of limit 1, from its own row, against one whose
# limit 1 comes from a pattern row with a parent (nested limits, 1.8)
cg_inline_sem_same() {
    echo "SELECT count(*) FROM (SELECT sync_acquire('sem/bench/1') AS a, sync_release('sem/bench/1') AS b FROM generate_series(1, $1) g OFFSET 0) s;"
}
cg_inline_nested_same() {
    echo "SELECT count(*) FROM (SELECT sync_acquire('sem/benchn/1') AS a, sync_release('sem/benchn/1') AS b FROM generate_series(1, $1) g OFFSET 0) s;"
}
