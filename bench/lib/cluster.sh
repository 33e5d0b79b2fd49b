# shellcheck shell=bash
# bench/lib/cluster.sh:
# the machine side of scripts/bench.sh (sourced by it, never run).
#
# bench_install   packages, the unprivileged user, the build and install;
#                 sets PGBIN, OS_USER and COMMIT (the build the report names)
# bench_cluster   initdb and start the throwaway cluster in $BENCH_DIR
#                 (unix socket only); sets DATA, SOCK, LOGS, PORT, DB and
#                 PSQL, and the EXIT trap (cleanup) that stops it
# bench_database  the bench database: syncwf, the sync_limit rows and the
#                 tables the comparisons share, then each comparison's
#                 cmpN_setup; sets PG_VERSION and SYNCWF_VERSION
# q SQL           runs SQL in the bench database, prints the rows
# wait_idle, check_no_syncwf_leftovers, check_server_log: see each.
# BG_PIDS, FILLER_PID: background sessions cleanup ends.

# --- packages, the unprivileged user, build and install ---------------------
# (with scripts/common.sh's ensure_packages, ensure_pg_user, load_pg_paths
# and build_and_install: see scripts/bench.sh)

bench_install() {
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
}

# --- throwaway cluster -------------------------------------------------------

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

bench_cluster() {
    DATA=$BENCH_DIR/data
    SOCK=$BENCH_DIR/sock
    LOGS=$BENCH_DIR/logs
    PORT=${BENCH_PORT:-54329}
    DB=bench
    if ((${#SOCK} > 90)); then
        # unix socket paths are limited to ~107 bytes
        SOCK=$(mktemp -d /tmp/syncwf-bench-sock.XXXXXX)
    fi

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
}

q() { as_pg "${PSQL[@]}" -d "$DB" -c "$1"; }

# shellcheck disable=SC2034  # PG_VERSION, SYNCWF_VERSION: the report's
bench_database() {
    as_pg "${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB" >/dev/null
    if [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        q "CREATE EXTENSION syncwf" >/dev/null
        # The queue entries and holds, read the way every library since
        # 1.6 can: comparison 17 swaps the 1.6 library in under this
        # version's objects, whose sync_entry_status() has more columns
        # than that library fills (it would write past its row and crash).
        # A library fills as many columns as its caller's definition has.
        q "CREATE FUNCTION bench_entries(OUT lock_name text, OUT state text, OUT pid integer,
               OUT scope text, OUT token bigint, OUT priority integer, OUT queue_position integer,
               OUT request_size integer, OUT since timestamptz, OUT holder text,
               OUT controller text, OUT lease_expires timestamptz, OUT active boolean,
               OUT slots integer, OUT mode text, OUT passes integer, OUT fair_key text,
               OUT fair_weight integer)
           RETURNS SETOF record AS '\$libdir/syncwf', 'sync_entry_status' LANGUAGE C" >/dev/null
        t=$SECONDS
        q "INSERT INTO sync_limit SELECT 'bench/' || g, 1 FROM generate_series(1, $NAMES) g" >/dev/null
        log "sync_limit: $NAMES rows 'bench/1'..'bench/$NAMES' with sizelimit 1 ($((SECONDS - t)) s)"
        q "INSERT INTO sync_limit SELECT 'benchw/' || g, 4 FROM generate_series(1, $NAMES) g;
           INSERT INTO sync_limit VALUES ('benchp/*', 1);
           INSERT INTO sync_limit (name, sizelimit) VALUES ('benchnp/all', 1000000);
           INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('benchn/*', 1, 'benchnp/all')" >/dev/null
        q "INSERT INTO sync_limit SELECT 'bench/k' || g, $KEYED_LIMIT FROM generate_series(1, $KEYED_SEMS) g;
           INSERT INTO sync_limit VALUES ('${DEEP_LOCK#sem/}', $CLIENTS)" >/dev/null
    fi
    as_pg "${PSQL[@]}" -d "$DB" -f "$ROOT/bench/pingpong.sql" >/dev/null
    as_pg "${PSQL[@]}" -d "$DB" -f "$ROOT/bench/keyed_setup.sql" >/dev/null
    q "INSERT INTO bench_sem_limit SELECT 'sem/bench/k' || g, $KEYED_LIMIT FROM generate_series(1, $KEYED_SEMS) g" >/dev/null
    # what single comparisons need besides (their cmpN_setup), in their order
    local n
    for n in "${CMPS[@]}"; do
        if declare -F "cmp${n}_setup" >/dev/null; then "cmp${n}_setup"; fi
    done
    q "VACUUM ANALYZE" >/dev/null

    PG_VERSION=$(q "SELECT version()")
    SYNCWF_VERSION=n/a
    if [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        SYNCWF_VERSION=$(q "SELECT extversion FROM pg_extension WHERE extname = 'syncwf'")
    fi
}

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

# No syncwf holds or waiters may survive a run but the FILLER_HOLDS holds
# of a filler session that stays (comparison 17's).
FILLER_HOLDS=0
check_no_syncwf_leftovers() {
    [[ $BENCH_SKIP_SYNCWF == 1 ]] && return 0
    local n
    wait_idle
    n=$(q "SELECT count(*) FROM bench_entries()")
    [[ $n == "$FILLER_HOLDS" ]] || die "$n syncwf entries left after all clients disconnected: $(q "SELECT string_agg(lock_name || ' ' || state || ' pid ' || pid, ', ') FROM (SELECT * FROM bench_entries() LIMIT 5) s")"
}

# The server log must report no crash.
check_server_log() {
    if grep -qE 'PANIC|TRAP:|terminated by signal|was terminated|server process .* exited with exit code [^0]' "$BENCH_DIR/server.log"; then
        die "the server log reports a crash: $(grep -m3 -E 'PANIC|TRAP:|terminated by signal|was terminated|exited with exit code' "$BENCH_DIR/server.log" | tr '\n' ' ')"
    fi
}
