#!/usr/bin/env bash
# Every syncwf test layer on ONE PostgreSQL major, from scratch: the major
# of $SYNCWF_PG_MAJOR (default 15), on this machine or inside that major's
# chroot. scripts/test.sh (README command 2, `make test`, .ci/run) runs this
# once per major and adds the counts up; run it alone for one major on the
# host. Installs what is missing (pgbouncer and prometheus-postgres-exporter
# too), builds with assertions on (warnings are errors), installs, then runs
# each layer against fresh servers started as the unprivileged OS user
# "postgres". Never touches .cluster/ (setup.sh's).
#
# Layers:
#   a. pg_regress  sql/NAME.sql + expected/NAME.out (or NAME_N.out, an
#                  alternative output), sorted by name, through PGXS's
#                  `make installcheck` against a fresh server configured
#                  with test/regress.conf.
#   b. isolation   test/isolation/specs/NAME.spec + .../expected/NAME.out,
#                  through `make installcheck` on the same server, after a.
#   c. pgTAP       test/pgtap/*.sql, run by pg_prove, one file after another,
#                  in database "regression" of one fresh server, where the
#                  harness has run CREATE EXTENSION pgtap and syncwf (files
#                  must not create syncwf; see test/pgtap/README).
#   d. Perl TAP    test/t/*.pl, run by prove from cwd test/ with
#                  PostgreSQL::Test::Cluster from PGXS on @INC (and test/ for
#                  helper modules); each test configures its own nodes.
#                  test/t/*_example_*.pl run the client examples of
#                  examples/, whose runtimes are installed first where
#                  missing (common.sh, ensure_example_runtimes).
#
# Output goes to $SYNCWF_TEST_OUT (default .test-out/pgN/, recreated). The
# last line printed is "N passed, N failed", counting test units: one per
# pg_regress test, per isolation spec, per pgTAP file, per TAP file; the same
# summary is written to summary.txt there. Exit status 0 iff nothing failed.
#
# SYNCWF_VALGRIND=1 (make test-valgrind): the pg_regress, isolation and pgTAP
# layers against one server running under valgrind memcheck (the Perl TAP
# tests start and kill their own servers, so they are left out); logs in
# valgrind/PID.log; fails on any valgrind error whose report mentions syncwf.
#
# For working on one part (never used by CI):
#   SYNCWF_LAYERS="regress isolation pgtap tap"  run only these layers
#   SYNCWF_ONLY=REGEX    only tests whose name (file name without extension)
#                        matches REGEX, in every layer run
#   SYNCWF_NO_BUILD=1    use the installed build (no make clean/install)
#   SYNCWF_ASSERT=0      build without assertions
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROOT="$SYNCWF_ROOT"
OUT="${SYNCWF_TEST_OUT:-$ROOT/.test-out/pg$PG_MAJOR}"
export SYNCWF_ASSERT="${SYNCWF_ASSERT:-1}"
RUN_LAYERS=" ${SYNCWF_LAYERS:-regress isolation pgtap tap} "
ONLY="${SYNCWF_ONLY:-}"
# keep a test name (without extension) when SYNCWF_ONLY is unset or matches
wanted() { [[ -z "$ONLY" ]] || [[ "$1" =~ $ONLY ]]; }
CONF="$ROOT/test/regress.conf"
VALGRIND="${SYNCWF_VALGRIND:-0}"
[[ "$VALGRIND" == 0 || -z "$VALGRIND" ]] && VALGRIND=0 || VALGRIND=1

# Beyond what setup.sh installs: Debian's pgbouncer, which the Perl TAP
# test 021_pgbouncer runs in front of its server, its
# prometheus-postgres-exporter, which 032_postgres_exporter runs with
# docs/postgres_exporter.yaml, and patroni, etcd-server and etcd-client,
# with which 033_patroni_failover runs a three-node cluster, and
# python3-etcd, which Patroni's etcd3 section needs (patroni depends on
# one of python3-etcd, -consul, -kazoo, ...: apt may pick another); its
# clients use python3-psycopg2, a dependency of patroni. Inside a chroot
# they are there already (see scripts/chroot.sh); one that lacks them gets
# them here, as the host does.
SUITE_PACKAGES=(pgbouncer prometheus-postgres-exporter patroni python3-etcd etcd-server etcd-client)
if [[ "${SYNCWF_NO_BUILD:-0}" == 1 ]]; then
    ensure_packages "${SUITE_PACKAGES[@]}"; ensure_pg_user; load_pg_paths
elif [[ "$VALGRIND" == 1 ]]; then
    syncwf_prepare "${SUITE_PACKAGES[@]}" valgrind
else
    syncwf_prepare "${SUITE_PACKAGES[@]}"
fi
[[ -f "$CONF" ]] || die "missing $CONF"
fresh_pg_dir "$OUT"
START_TS=$SECONDS

# Environment for everything run as the server user.
PG_ENV=(PATH="$PG_BINDIR:/usr/local/bin:/usr/bin:/bin" LC_ALL=C.UTF-8 LANG=C.UTF-8
        TZ="${TZ:-UTC}")
run_pg() { as_pg "${PG_ENV[@]}" "$@"; }

# Unix socket directories must have short paths (~100 bytes max).
short_sockdir() {
    local want="$1"
    if (( ${#want} > 80 )); then
        want="$(mktemp -d /tmp/syncwf-sock.XXXXXX)"
        is_root && chown "$PG_OS_USER:" "$want"
    else
        run_pg mkdir -p "$want"
    fi
    echo "$want"
}

# A TCP port nobody listens on (servers we start listen on a unix socket only,
# but the port still names the socket file; pick a distinct one anyway).
free_port() {
    local p
    for p in $(seq "$1" $(( $1 + 200 ))); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
    done
    echo "$1"
}

# Servers we start ourselves; stopped on any exit.
STARTED_DATADIRS=()
stop_servers() {
    local d
    for d in "${STARTED_DATADIRS[@]+"${STARTED_DATADIRS[@]}"}"; do
        if [[ -f "$d/postmaster.pid" ]]; then
            run_pg pg_ctl -D "$d" -m immediate -w stop >/dev/null 2>&1 || true
        fi
    done
}
trap stop_servers EXIT

# start_instance DIR PORT [extra conf line...]: initdb DIR/data with
# test/regress.conf and start it; sets INST_SOCK and INST_DATA.
# PG_CTL_EXTRA may hold extra pg_ctl options (valgrind wrapper).
PG_CTL_EXTRA=()
start_instance() {
    local dir="$1" port="$2"; shift 2
    INST_DATA="$dir/data"
    INST_SOCK="$(short_sockdir "$dir/sock")"
    run_pg initdb -D "$INST_DATA" -U postgres -A trust --no-locale -E UTF8 --no-sync \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; return 1; }
    {
        echo "# scripts/suite.sh"
        cat "$CONF"
        echo "port = $port"
        echo "listen_addresses = ''"
        echo "unix_socket_directories = '$INST_SOCK'"
        echo "fsync = off"
        echo "log_line_prefix = '%m [%p] %q%a '"
        local l; for l in "$@"; do echo "$l"; done
    } | run_pg tee -a "$INST_DATA/postgresql.conf" >/dev/null
    STARTED_DATADIRS+=("$INST_DATA")
    run_pg pg_ctl -D "$INST_DATA" -l "$dir/postmaster.log" -w -t "${PG_CTL_TIMEOUT:-120}" \
        "${PG_CTL_EXTRA[@]+"${PG_CTL_EXTRA[@]}"}" start >/dev/null \
        || { tail -n 40 "$dir/postmaster.log"; return 1; }
}
stop_instance() {
    run_pg pg_ctl -D "$1" -m fast -w -t "${PG_CTL_TIMEOUT:-120}" stop >/dev/null 2>&1 || true
}

# Shared-server mode (the valgrind run): when SHARED_PORT is set, the
# regress, isolation and pgTAP layers run against that already running
# server instead of starting their own, and LAYER_TAG marks their names.
SHARED_SOCK=""; SHARED_PORT=""; LAYER_TAG=""

# ---------------------------------------------------------------------------
# Per-layer results.
LAYERS=()            # display names
declare -A L_PASS L_FAIL L_NOTE
FAIL_REPORT="$OUT/failures.txt"   # diffs and logs shown before the summary
: >"$FAIL_REPORT"

LAYER_T0=$SECONDS
record() { # name pass fail note  (elapsed time since the previous record)
    LAYERS+=("$1"); L_PASS[$1]=$2; L_FAIL[$1]=$3
    L_NOTE[$1]="$4"
    [[ "$4" == "no tests" ]] || L_NOTE[$1]+="; $((SECONDS - LAYER_T0)) s"
    LAYER_T0=$SECONDS
}
add_failure_text() { # title file-or-- [tail-lines]
    {
        printf '\n----- %s -----\n' "$1"
        if [[ "$2" == - ]]; then cat
        elif [[ -n "${3:-}" ]]; then tail -n "$3" "$2" 2>/dev/null || echo "(no $2)"
        else cat "$2" 2>/dev/null || echo "(no $2)"
        fi
    } >>"$FAIL_REPORT"
}

# Count pg_regress / pg_isolation_regress result lines in a log: 15 prints
# "test NAME ... ok" (or "FAILED"), 16 and later print TAP ("ok 1 - NAME",
# "not ok 2 - NAME"). Prints "passed failed".
count_regress() { # log expected-count exit-status
    local log="$1" expected="$2" rc="$3" ok bad
    ok=$(grep -cE '^((test |ignore |  +)[^ ]+ +\.\.\. (ok|failed \(ignored\))|ok [0-9]+ +[-+] )' "$log" || true)
    bad=$(grep -cE '^((test |ignore |  +)[^ ]+ +\.\.\. FAILED|not ok [0-9]+ +[-+] )' "$log" || true)
    # Tests that never reported (instance failed to start, crash...) count as failed.
    if (( ok + bad < expected )); then bad=$(( expected - ok )); fi
    if (( rc != 0 && bad == 0 )); then bad=$(( expected - ok > 0 ? expected - ok : 1 )); fi
    echo "$ok $bad"
}

# Add the pg_regress artefacts of a failed run to the failure report.
regress_failure_text() { # layer outdir [server-log]
    local out="$2" srvlog="${3:-}"
    [[ -s "$out/regression.diffs" ]] && add_failure_text "$1: $out/regression.diffs" "$out/regression.diffs"
    [[ -n "$srvlog" && -f "$srvlog" ]] && add_failure_text "$1: tail of $srvlog" "$srvlog" 40
    return 0
}

# Parse a prove / pg_prove (TAP::Harness) log. Sets H_PASS H_FAIL H_ASSERT
# H_AFAIL H_FAILED_FILES (array). A file passed iff its line reads "FILE .. ok"
# (or "skipped"); assertion totals come from the "Files=N, Tests=M" line and
# the "Failed: K" counts of the Test Summary Report.
parse_harness() { # log rc file...
    local log="$1" rc="$2"; shift 2
    local f
    H_PASS=0; H_FAIL=0; H_FAILED_FILES=()
    for f in "$@"; do
        if awk -v f="$f" 'substr($0, 1, length(f)) == f &&
                substr($0, length(f) + 1) ~ /^ \.+ (ok|skipped)/ { found = 1 }
                END { exit !found }' "$log"; then
            H_PASS=$((H_PASS + 1))
        else
            H_FAIL=$((H_FAIL + 1)); H_FAILED_FILES+=("$f")
        fi
    done
    H_ASSERT=$(sed -nE 's/^Files=[0-9]+, Tests=([0-9]+),.*/\1/p' "$log" | tail -n1)
    [[ -n "$H_ASSERT" ]] || H_ASSERT="?"
    H_AFAIL=$(sed -nE 's/^.* \(Wstat: .*Tests: [0-9]+ Failed: ([0-9]+)\)$/\1/p' "$log" \
              | awk '{s+=$1} END {print s+0}')
    # Harness died without per-file verdicts but said nothing failed: trust rc.
    if (( rc != 0 && H_FAIL == 0 )); then
        H_FAIL=$#; H_PASS=0; H_FAILED_FILES=("$@")
    fi
}

# ---------------------------------------------------------------------------
# a and b share one server, as they would for a packager: PGXS's
# `make installcheck` runs the regress suite (it creates database
# "regression"), then the isolation suite in that same database. In
# shared-server mode (valgrind) that server is the shared one.
SQL_SOCK=""; SQL_PORT=""; SQL_DATA=""
sql_server() {
    [[ -n "$SQL_PORT" ]] && return 0
    if [[ -n "$SHARED_PORT" ]]; then
        SQL_SOCK="$SHARED_SOCK"; SQL_PORT="$SHARED_PORT"; SQL_DATA=""; return 0
    fi
    local port; port=$(free_port 54600)
    run_pg mkdir -p "$OUT/sql"
    start_instance "$OUT/sql" "$port" || return 1
    SQL_SOCK="$INST_SOCK"; SQL_PORT="$port"; SQL_DATA="$INST_DATA"
}
sql_server_stop() {
    if [[ -n "$SQL_DATA" ]]; then stop_instance "$SQL_DATA"; fi
    SQL_SOCK=""; SQL_PORT=""; SQL_DATA=""
}
sql_server_log() { if [[ -n "$SQL_DATA" ]]; then echo "$OUT/sql/postmaster.log"; fi; }

# installcheck OUTDIR LOG MAKEVAR=...: PGXS's installcheck against the
# a/b server, run as the server user with OUTDIR as its working directory
# (pg_regress writes results/ and regression.diffs there, the isolation
# run output_iso/).
installcheck() {
    local out="$1" logf="$2"; shift 2
    run_pg mkdir -p "$out"
    (cd "$out" && run_pg make --no-print-directory -f "$ROOT/Makefile" PG_CONFIG="$PG_CONFIG" \
        EXTRA_REGRESS_OPTS="--host=$SQL_SOCK --port=$SQL_PORT --user=postgres" \
        "$@" installcheck) 2>&1 | tee "$logf"
    return "${PIPESTATUS[0]}"
}

# the names of the files GLOB (sorted), without directory and SUFFIX, that
# SYNCWF_ONLY wants; KEEP is always kept (the regress suite's 00_setup)
test_names() { # glob suffix keep
    local f n
    shopt -s nullglob
    for f in $1; do
        n="${f##*/}"; n="${n%"$2"}"
        if [[ "$n" == "$3" ]] || wanted "$n"; then echo "$n"; fi
    done | LC_ALL=C sort
    shopt -u nullglob
}

# Shared-server mode: the syncwf worker stays connected to the test database
# (syncwf.database = 'regression'), so a layer that needs it fresh drops it
# with FORCE first.
shared_drop_db() {
    [[ -n "$SHARED_PORT" ]] || return 0
    run_pg psql -X -q -h "$SHARED_SOCK" -p "$SHARED_PORT" -U postgres -d postgres \
        -c "DROP DATABASE IF EXISTS regression WITH (FORCE)" >/dev/null
}

# a. pg_regress
layer_regress() {
    local name="pg_regress$LAYER_TAG" out="$OUT${LAYER_TAG:+/valgrind}/regress" tests
    log "layer a: pg_regress (sql/*.sql, make installcheck)"
    mapfile -t tests < <(test_names "$ROOT/sql/*.sql" .sql 00_setup)
    if ((${#tests[@]} == 0)); then
        echo "no tests (no sql/*.sql)"; record "$name" 0 0 "no tests"; return
    fi
    if ! sql_server; then
        add_failure_text "pg_regress instance start" "$OUT/sql/postmaster.log" 40
        record "$name" 0 "${#tests[@]}" "${#tests[@]} tests; instance setup failed"; return
    fi
    shared_drop_db
    local rc=0
    installcheck "$out" "$out.log" REGRESS="${tests[*]}" ISOLATION= || rc=$?
    read -r p f < <(count_regress "$out.log" "${#tests[@]}" "$rc")
    ((f == 0)) || regress_failure_text "$name" "$out" "$(sql_server_log)"
    echo "pg_regress: $p passed, $f failed"
    record "$name" "$p" "$f" "$((p + f)) tests"
}

# a', b', c'. the SQL layers against one server under valgrind (SYNCWF_VALGRIND=1)
layer_valgrind() {
    local name="valgrind memcheck" vg="$OUT/valgrind"
    log "layers a, b, c against one server under valgrind memcheck (slow)"
    run_pg mkdir -p "$vg"
    local wrapper="$vg/postgres-valgrind"
    cat >"$wrapper" <<EOF
#!/bin/sh
exec valgrind --tool=memcheck --trace-children=yes --leak-check=no --error-limit=no \\
    --suppressions='$ROOT/test/valgrind.supp' \\
    --log-file='$vg/%p.log' '$PG_BINDIR/postgres' "\$@"
EOF
    chmod 755 "$wrapper"
    local port; port=$(free_port 54900)
    PG_CTL_EXTRA=(-p "$wrapper"); PG_CTL_TIMEOUT=600
    if ! start_instance "$vg" "$port"; then
        add_failure_text "valgrind instance start" "$vg/postmaster.log" 40
        record "$name" 0 1 "instance did not start"; return
    fi
    local vg_data="$INST_DATA"
    SHARED_SOCK="$INST_SOCK"; SHARED_PORT="$port"; LAYER_TAG=" (valgrind)"
    layer_regress
    layer_isolation
    layer_pgtap
    SHARED_SOCK=""; SHARED_PORT=""; LAYER_TAG=""
    stop_instance "$vg_data"
    PG_CTL_EXTRA=(); unset PG_CTL_TIMEOUT

    # Valgrind errors whose report mentions syncwf: the string itself (frames
    # "(in .../syncwf.so)") or a frame in one of the module's functions (with
    # debug info valgrind prints "func (holds.c:12)", not the object name).
    local vgbad="$vg/syncwf-errors.txt" nlogs
    nlogs=$(find "$vg" -maxdepth 1 -name '[0-9]*.log' | wc -l)
    nm --defined-only "$("$PG_CONFIG" --pkglibdir)/syncwf.so" 2>/dev/null \
        | awk '$2 ~ /^[tTwWiI]$/ { print $3 }' | sed 's/\..*//' | sort -u >"$vg/syncwf-functions.txt" || true
    SYNCWF_FUNCS="$vg/syncwf-functions.txt" perl -e '
        my %fn;
        if (open my $fh, "<", $ENV{SYNCWF_FUNCS}) { while (<$fh>) { chomp; $fn{$_} = 1 if length } }
        my $bad = 0;
        for my $f (@ARGV) {
            open my $fh, "<", $f or next; local $/; my $t = <$fh>;
            next unless $t =~ /ERROR SUMMARY: ([1-9][0-9]*) errors/;
            my @blocks = split /^==\d+==\s*\n/m, $t;
            for my $b (@blocks) {
                my $hit = $b =~ /syncwf/;
                while (!$hit && $b =~ /^==\d+==\s+(?:at|by) 0x[0-9A-Fa-f]+: ([A-Za-z_][A-Za-z0-9_]*)/mg) {
                    $hit = 1 if $fn{$1};
                }
                next unless $hit;
                next if $b =~ /Memcheck, a memory error detector|ERROR SUMMARY|Command:/;
                print "== $f\n$b\n"; $bad++;
            }
        }
        exit($bad ? 1 : 0);' "$vg"/[0-9]*.log >"$vgbad" 2>/dev/null || true
    local verrs; verrs=$(grep -c '^== ' "$vgbad" || true)
    echo "valgrind: $nlogs process logs, $verrs error reports mentioning syncwf"
    if ((verrs > 0)); then
        add_failure_text "valgrind errors mentioning syncwf" "$vgbad"
        record "$name" 0 1 "$nlogs process logs; $verrs error report(s) mentioning syncwf"
    else
        record "$name" 1 0 "$nlogs process logs; no error touching syncwf"
    fi
}

ensure_regression_db() {
    local q=(run_pg psql -X -q -v ON_ERROR_STOP=1 -h "$SQL_SOCK" -p "$SQL_PORT" -U postgres -d postgres)
    [[ "$("${q[@]}" -Atc "SELECT count(*) FROM pg_database WHERE datname = 'regression'")" == 1 ]] \
        || "${q[@]}" -c "CREATE DATABASE regression"
}

# b. isolation, in the database the regress suite left (created if a did
# not run)
layer_isolation() {
    local name="isolation$LAYER_TAG" out="$OUT${LAYER_TAG:+/valgrind}/isolation" specs
    log "layer b: isolation (test/isolation/specs/*.spec, make installcheck)"
    mapfile -t specs < <(test_names "$ROOT/test/isolation/specs/*.spec" .spec "")
    if ((${#specs[@]} == 0)); then
        echo "no tests (no test/isolation/specs/*.spec)"; record "$name" 0 0 "no tests"; return
    fi
    if ! sql_server || ! ensure_regression_db; then
        add_failure_text "isolation instance setup" "$OUT/sql/postmaster.log" 40
        record "$name" 0 "${#specs[@]}" "${#specs[@]} specs; instance setup failed"; return
    fi
    local rc=0
    installcheck "$out" "$out.log" REGRESS= ISOLATION="${specs[*]}" || rc=$?
    read -r p f < <(count_regress "$out.log" "${#specs[@]}" "$rc")
    ((f == 0)) || regress_failure_text "$name" "$out/output_iso" "$(sql_server_log)"
    sql_server_stop
    echo "isolation: $p passed, $f failed"
    record "$name" "$p" "$f" "$((p + f)) specs"
}

# c. pgTAP
layer_pgtap() {
    local name="pgTAP$LAYER_TAG" dir="$OUT${LAYER_TAG:+/valgrind}/pgtap" files=() x
    log "layer c: pgTAP (test/pgtap/*.sql via pg_prove)"
    for x in $(test_names "$ROOT/test/pgtap/*.sql" .sql ""); do files+=("test/pgtap/$x.sql"); done
    if ((${#files[@]} == 0)); then
        echo "no tests (no test/pgtap/*.sql)"; record "$name" 0 0 "no tests"; return
    fi
    run_pg mkdir -p "$dir"
    local port
    if [[ -n "$SHARED_PORT" ]]; then
        port="$SHARED_PORT"; INST_SOCK="$SHARED_SOCK"; INST_DATA=""
    else
        port=$(free_port 54700)
        if ! start_instance "$dir" "$port"; then
            add_failure_text "pgTAP instance start" "$dir/postmaster.log" 40
            record "$name" 0 "${#files[@]}" "${#files[@]} files; instance setup failed"; return
        fi
    fi
    local db=regression
    shared_drop_db
    if ! run_pg psql -X -q -v ON_ERROR_STOP=1 -h "$INST_SOCK" -p "$port" -U postgres -d postgres \
            -c "CREATE DATABASE $db" \
         || ! run_pg psql -X -q -v ON_ERROR_STOP=1 -h "$INST_SOCK" -p "$port" -U postgres -d "$db" \
            -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION syncwf"; then
        if [[ -n "$INST_DATA" ]]; then stop_instance "$INST_DATA"; fi
        add_failure_text "pgTAP database setup" "$dir/postmaster.log" 40
        record "$name" 0 "${#files[@]}" "${#files[@]} files; instance setup failed"; return
    fi
    local rc=0
    (cd "$ROOT" && run_pg pg_prove -h "$INST_SOCK" -p "$port" -U postgres -d "$db" \
        "${files[@]}") 2>&1 | tee "$dir/pg_prove.log" || rc=$?
    if [[ -n "$INST_DATA" ]]; then stop_instance "$INST_DATA"; fi
    parse_harness "$dir/pg_prove.log" "$rc" "${files[@]}"
    if ((H_FAIL > 0)); then
        add_failure_text "pgTAP: pg_prove output" "$dir/pg_prove.log"
        add_failure_text "pgTAP: tail of $dir/postmaster.log" "$dir/postmaster.log" 40
    fi
    echo "pgTAP: $H_PASS passed, $H_FAIL failed"
    record "$name" "$H_PASS" "$H_FAIL" "${#files[@]} files; assertions: $H_ASSERT run, $H_AFAIL failed"
}

# d. Perl TAP (PostgreSQL::Test::Cluster)
layer_tap() {
    local name="Perl TAP" dir="$OUT/tap" files=() x
    log "layer d: Perl TAP (test/t/*.pl via prove)"
    for x in $(test_names "$ROOT/test/t/*.pl" .pl ""); do files+=("t/$x.pl"); done
    if ((${#files[@]} == 0)); then
        echo "no tests (no test/t/*.pl)"; record "$name" 0 0 "no tests"; return
    fi
    run_pg mkdir -p "$dir/tmp_check"
    # The client examples' runtimes (python3-psycopg, node, node-postgres;
    # see common.sh), for the tests that run them. Installed where missing,
    # also in an already cached chroot; if that fails, those tests fail
    # and say what is missing.
    if [[ " ${files[*]} " == *_example_* ]] && ! (ensure_example_runtimes); then
        echo "warning: the client examples' runtimes could not be installed" >&2
    fi
    # What PGXS's prove_installcheck sets: TESTDIR (tmp_check/ and its log/
    # go under it), PG_REGRESS (Cluster.pm's init runs pg_regress
    # --config-auth), the PG bindir first on PATH (initdb, pg_ctl, psql,
    # pg_config), the PGXS perl modules and test/ on @INC.
    local rc=0
    # 16 and later read TESTDATADIR (tmp_check/) and TESTLOGDIR (its log/)
    # instead of deriving them from TESTDIR.  SYNCWF_BUILD_DIR: the object
    # files the layer check (016) reads.
    (cd "$ROOT/test" && run_pg TESTDIR="$dir" TESTDATADIR="$dir/tmp_check" \
        SYNCWF_BUILD_DIR="$SYNCWF_BUILD_DIR" \
        TESTLOGDIR="$dir/tmp_check/log" PG_REGRESS="$PG_REGRESS" \
        PERL5LIB="$PG_PERL_DIR:$ROOT/test" PGPORT="$(free_port 54800)" \
        PG_TEST_TIMEOUT_DEFAULT="${PG_TEST_TIMEOUT_DEFAULT:-180}" \
        prove -I "$PG_PERL_DIR" -I "$ROOT/test" "${files[@]}") 2>&1 \
        | tee "$dir/prove.log" || rc=$?
    parse_harness "$dir/prove.log" "$rc" "${files[@]}"
    local f b
    # the servers' logs first, the test's own log last: a report read from
    # its end shows what the test saw before what the servers did
    for f in "${H_FAILED_FILES[@]+"${H_FAILED_FILES[@]}"}"; do
        b="${f##*/}"; b="${b%.pl}"
        for x in "$dir"/tmp_check/log/"${b}"_*.log; do
            [[ -f "$x" ]] && add_failure_text "Perl TAP $f: tail of ${x##*/}" "$x" 20
        done
        add_failure_text "Perl TAP $f: tail of regress_log_$b" "$dir/tmp_check/log/regress_log_$b" 60
        grep -hE '(^|\) )not ok|Dubious|Looks like|died|Died|giving up|BAIL' "$dir/prove.log" \
            "$dir/tmp_check/log/regress_log_$b" 2>/dev/null | tail -n 15 \
            | add_failure_text "Perl TAP $f: its failures and errors" -
    done
    echo "Perl TAP: $H_PASS passed, $H_FAIL failed"
    record "$name" "$H_PASS" "$H_FAIL" "${#files[@]} files; assertions: $H_ASSERT run, $H_AFAIL failed"
}

# ---------------------------------------------------------------------------
if [[ "$VALGRIND" == 1 ]]; then
    layer_valgrind
else
    [[ "$RUN_LAYERS" == *" regress "* ]] && layer_regress
    [[ "$RUN_LAYERS" == *" isolation "* ]] && layer_isolation
    sql_server_stop
    [[ "$RUN_LAYERS" == *" pgtap "* ]] && layer_pgtap
    [[ "$RUN_LAYERS" == *" tap "* ]] && layer_tap
fi
stop_servers
if is_root; then chown -R "$PG_OS_USER:" "$OUT" 2>/dev/null || true; fi

if [[ -s "$FAIL_REPORT" ]]; then
    log "failure details (also in $FAIL_REPORT)"
    cat "$FAIL_REPORT"
fi

TOTAL_P=0; TOTAL_F=0
log "summary, PostgreSQL $PG_MAJOR ($((SECONDS - START_TS)) s of tests; outputs in $OUT)"
SUMMARY="$OUT/summary.txt"
{
    for l in "${LAYERS[@]}"; do
        if [[ "${L_NOTE[$l]}" == "no tests" ]]; then
            printf '  %-22s no tests\n' "$l:"
        else
            printf '  %-22s %d passed, %d failed (%s)\n' "$l:" "${L_PASS[$l]}" "${L_FAIL[$l]}" "${L_NOTE[$l]}"
        fi
        TOTAL_P=$((TOTAL_P + ${L_PASS[$l]})); TOTAL_F=$((TOTAL_F + ${L_FAIL[$l]}))
    done
    echo "$TOTAL_P passed, $TOTAL_F failed"
} >"$SUMMARY"
if is_root; then chown "$PG_OS_USER:" "$SUMMARY" 2>/dev/null || true; fi
cat "$SUMMARY"
((TOTAL_F == 0))
