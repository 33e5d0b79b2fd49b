#!/usr/bin/env bash
# Build + install syncwf and run a throwaway development cluster in .cluster/.
#
#   scripts/setup.sh          install missing packages, build, install, (re)start
#                             the cluster, create database "syncwf" with the
#                             extension, print the psql command to connect
#                             and a DATABASE_URL for the client examples
#                             (whose runtimes it installs too, see common.sh)
#   scripts/setup.sh stop     stop the cluster
#   scripts/setup.sh reset    stop the cluster and delete .cluster/ entirely
#
# The port is 5499 unless SYNCWF_PORT is set. The server runs as the
# unprivileged OS user "postgres", listens on localhost only and puts its unix
# socket in .cluster/socket. Safe to run again: it rebuilds, reinstalls and
# restarts. The extension in database "syncwf" is brought to the default
# version of syncwf.control: an older version is updated in place (ALTER
# EXTENSION syncwf UPDATE, which keeps every hold and row); when the install
# script of the default version changed since the extension was created or
# updated, or no update path leads from the installed version to the default
# one, the extension is dropped (CASCADE) and created again.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PORT="${SYNCWF_PORT:-5499}"
CLUSTER="$SYNCWF_ROOT/.cluster"
PGDATA_DIR="$CLUSTER/data"
SOCKDIR="$CLUSTER/socket"
LOGFILE="$CLUSTER/postgresql.log"
DB=syncwf

pg_ctl_() { as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" "$@"; }
running() { [[ -f "$PGDATA_DIR/postmaster.pid" ]] && pg_ctl_ status >/dev/null 2>&1; }

stop_cluster() {
    if [[ -d "$PGDATA_DIR" ]] && running; then
        log "stopping cluster in $PGDATA_DIR"
        pg_ctl_ -m fast -w stop
    else
        echo "cluster not running"
    fi
}

cmd="${1:-}"
case "$cmd" in
    stop)
        load_pg_paths
        stop_cluster
        exit 0
        ;;
    reset)
        load_pg_paths
        stop_cluster
        rm -rf "$CLUSTER"
        echo "removed $CLUSTER"
        exit 0
        ;;
    "") ;;
    *) die "usage: $0 [stop|reset]" ;;
esac

# shellcheck disable=SC2119  # no extra packages
syncwf_prepare
# What the client examples of examples/ need (psycopg, node, node-postgres),
# so that they run against this cluster; the cluster does not need them.
(ensure_example_runtimes) || echo "warning: the client examples' runtimes could not be installed" >&2

if [[ ! -f "$PGDATA_DIR/PG_VERSION" ]]; then
    log "creating cluster in $PGDATA_DIR"
    rm -rf "$CLUSTER"
    mkdir -p "$CLUSTER"
    chown "$PG_OS_USER:" "$CLUSTER" 2>/dev/null || true
    as_pg "$PG_BINDIR/initdb" -D "$PGDATA_DIR" -U postgres -A trust \
        --no-locale -E UTF8 >"$CLUSTER/initdb.log" \
        || { cat "$CLUSTER/initdb.log"; die "initdb failed"; }
    echo "include_if_exists = 'syncwf_dev.conf'" >>"$PGDATA_DIR/postgresql.conf"
fi
as_pg mkdir -p "$SOCKDIR"

# Rewritten every run so a changed SYNCWF_PORT or setting takes effect.
as_pg tee "$PGDATA_DIR/syncwf_dev.conf" >/dev/null <<EOF
# Written by scripts/setup.sh on every run; edit that script, not this file.
port = $PORT
listen_addresses = 'localhost'
unix_socket_directories = '$SOCKDIR'
shared_preload_libraries = 'syncwf,pg_cron'
cron.database_name = '$DB'
syncwf.database = '$DB'
EOF

if running; then
    log "restarting cluster (port $PORT)"
    pg_ctl_ -m fast -w -l "$LOGFILE" restart >/dev/null \
        || { tail -n 30 "$LOGFILE"; die "restart failed"; }
else
    rm -f "$PGDATA_DIR/postmaster.pid"   # stale pid file from a killed server
    log "starting cluster (port $PORT)"
    pg_ctl_ -w -l "$LOGFILE" start >/dev/null \
        || { tail -n 30 "$LOGFILE"; die "start failed (see $LOGFILE)"; }
fi

psql_() { as_pg "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCKDIR" -p "$PORT" -U postgres "$@"; }

if [[ "$(psql_ -d postgres -Atc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]]; then
    psql_ -d postgres -c "CREATE DATABASE $DB"
fi

# the default version of the syncwf.control just installed
default_version="$(psql_ -d "$DB" -Atc "SELECT default_version FROM pg_available_extensions WHERE name = 'syncwf'")"
[[ -n "$default_version" ]] || die "the server lists no syncwf extension (was it installed?)"
sql_file="syncwf--$default_version.sql"
[[ -f "$SYNCWF_ROOT/$sql_file" ]] || die "missing $sql_file (default_version of syncwf.control)"
sql_sum="$(sha256sum "$SYNCWF_ROOT/$sql_file" | cut -d' ' -f1)"
have_version="$(psql_ -d "$DB" -Atc "SELECT extversion FROM pg_extension WHERE extname = 'syncwf'")"
if [[ -n "$have_version" && "$have_version" != "$default_version" ]]; then
    can_update="$(psql_ -d "$DB" -Atc "SELECT 1 FROM pg_extension_update_paths('syncwf')
        WHERE source = '$have_version' AND target = '$default_version' AND path IS NOT NULL")"
    if [[ "$can_update" == 1 ]]; then
        log "updating the extension in database $DB from $have_version to $default_version"
        psql_ -d "$DB" -c "ALTER EXTENSION syncwf UPDATE TO '$default_version'"
    else
        log "no update path from $have_version to $default_version: re-creating the extension in database $DB"
        psql_ -d "$DB" -c "DROP EXTENSION syncwf CASCADE"
        have_version=""
    fi
elif [[ -n "$have_version" && "$(cat "$CLUSTER/extension.sha256" 2>/dev/null)" != "$sql_sum" ]]; then
    log "$sql_file changed: re-creating the extension in database $DB"
    psql_ -d "$DB" -c "DROP EXTENSION syncwf CASCADE"
    have_version=""
fi
if [[ -z "$have_version" ]]; then
    psql_ -d "$DB" -c "CREATE EXTENSION syncwf"
fi
echo "$sql_sum" >"$CLUSTER/extension.sha256"

log "ready; server log: $LOGFILE"
echo "connect with:"
echo "psql -h $SOCKDIR -p $PORT -U postgres $DB"
echo "or, for the client examples (examples/README.md):"
echo "export DATABASE_URL=postgresql://postgres@localhost:$PORT/$DB"
