# shellcheck shell=bash
# bench/cmp/16_memory.sh: comparison 16, shared memory that grows with use.
#
# A cluster of its own, made for this comparison: shared_memory_size
# (postgres -C, the server stopped) with and without syncwf preloaded, at
# default settings; then, started, what sync_memory says at start, after
# one session took $MEM_LOCKS mutexes, and after it released them all
# (memory is reused, not given back); and the time each step took.
# Target: syncwf adds at most 8 MB at default settings.
# Report: MEM_ROWS, its own section (cmp16_details).
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

MEM_LOCKS=${BENCH_MEM_LOCKS:-2000000}
MEM_ROWS=()

# mem_q SQL: run SQL in the memory comparison's cluster
mem_q() { as_pg "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$MEM_DIR" -p "$MEM_PORT" -U postgres -d postgres -c "$1"; }

# mem_row WHEN: a row of the report from sync_memory now
mem_row() {
    local when=$1 line
    line=$(mem_q "SELECT pg_size_pretty(allocated_bytes) || '|' || pg_size_pretty(used_bytes) || '|' ||
                         locks || '|' || entries || '|' || pct_of_max FROM sync_memory")
    MEM_ROWS+=("| $when | ${line//|/ | } |")
    log "comparison 16: $when: allocated | used | locks | entries | % of cap: $line"
}

cmp16_run() {
    if want 16 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        MEM_DIR=$BENCH_DIR/memory
        MEM_PORT=$((PORT + 1))
        log "comparison 16: shared memory at start, with $MEM_LOCKS locks and after their release, in a cluster of its own"
        rm -rf "$MEM_DIR"
        mkdir -p "$MEM_DIR"
        is_root && chown "$OS_USER:" "$MEM_DIR"
        as_pg "$PGBIN/initdb" -D "$MEM_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
            >"$LOGS/memory-initdb.log" 2>&1 || die "initdb failed, see $LOGS/memory-initdb.log"
        local without with secs t
        without=$(as_pg "$PGBIN/postgres" -D "$MEM_DIR/data" -C shared_memory_size)
        with=$(as_pg "$PGBIN/postgres" -D "$MEM_DIR/data" -c shared_preload_libraries=syncwf -C shared_memory_size)
        MEM_ROWS+=("| shared_memory_size (postgres -C), default settings | without syncwf $without MB, with it $with MB | | | | |")
        {
            echo "listen_addresses = ''"
            echo "unix_socket_directories = '$MEM_DIR'"
            echo "port = $MEM_PORT"
            echo "shared_preload_libraries = 'syncwf'"
        } >>"$MEM_DIR/data/postgresql.conf"
        as_pg "$PGBIN/pg_ctl" -D "$MEM_DIR/data" -l "$BENCH_DIR/memory-server.log" -w -t 120 start >/dev/null ||
            die "the memory comparison's cluster did not start, see $BENCH_DIR/memory-server.log"
        mem_q "CREATE EXTENSION syncwf" >/dev/null
        mem_row "at start, holding nothing"
        # one session takes the locks (50 to a call), reads the view, and
        # releases them; the three steps timed by the server
        t=$(date +%s.%N)
        as_pg "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$MEM_DIR" -p "$MEM_PORT" -U postgres -d postgres \
            -c "DO \$\$ BEGIN
                  FOR b IN 0 .. $MEM_LOCKS / 50 - 1 LOOP
                    PERFORM sync_acquire(array(SELECT 'mtx/mem/' || (b * 50 + i) FROM generate_series(1, 50) i));
                  END LOOP;
                END \$\$" \
            -c "\\o $MEM_DIR/held.txt" \
            -c "SELECT pg_size_pretty(allocated_bytes) || '|' || pg_size_pretty(used_bytes) || '|' || locks || '|' || entries || '|' || pct_of_max FROM sync_memory" \
            -c "\\o" \
            -c "SELECT sync_release_all()" >/dev/null
        secs=$(since "$t")
        MEM_ROWS+=("| after $MEM_LOCKS held mutexes (one session, 50 to a call; taken and released in ${secs} s) | $(sed 's/|/ | /g' "$MEM_DIR/held.txt") |")
        mem_row "after their release (cached: reused, not given back)"
        as_pg "$PGBIN/pg_ctl" -D "$MEM_DIR/data" -w -m fast stop >/dev/null
        rm -rf "$MEM_DIR"
        add_summary "16. Memory at start" "shared_memory_size with syncwf - without, at default settings (MB: $with - $without)" \
            "$((with - without))" "<=" 8
    else
        add_summary "16. Memory at start" "shared_memory_size with syncwf - without, at default settings (MB)" "n/a" "<=" 8
    fi
}

cmp16_describe() {
    cat <<EOF
16. **Memory that grows with use**: a cluster of its own, at default
   settings. \`postgres -C shared_memory_size\` with the server stopped,
   without syncwf and with \`-c shared_preload_libraries=syncwf\`; then,
   started, the view \`sync_memory\` at start, after one session took
   $MEM_LOCKS mutexes (\`sync_acquire\` of 50 names to a call) and after
   it released them all (\`sync_release_all()\`): the locks stay cached and
   the memory stays taken, to be reused. Target: syncwf adds at most 8 MB
   at default settings. Code: bench/cmp/16_memory.sh.
EOF
}

cmp16_details() {
    ((${#MEM_ROWS[@]})) || return 0
    cat <<EOF

### 16. Memory

| when | allocated | in use | locks | entries | % of syncwf.max_memory |
| --- | --- | --- | --- | --- | --- |
EOF
    printf '%s\n' "${MEM_ROWS[@]}"
}
