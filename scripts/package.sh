#!/usr/bin/env bash
# Release artefacts, and the test layer that builds, installs and tests them.
#
#   bash scripts/package.sh dist            dist/syncwf-VERSION.zip for PGXN
#                                           (`make dist`)
#   bash scripts/package.sh deb [MAJOR]...  Debian packages for PostgreSQL 15,
#                                           17 and 18 (`make deb`), in
#                                           dist/debian/SUITE/
#   bash scripts/package.sh test [MAJOR]... the packages layer of the test
#                                           command: every step below, then
#                                           "N passed, N failed"
#
# VERSION is the release version (META.json). Both artefacts are made from
# `git archive` of the tracked files as they are in the working tree (HEAD
# when it is clean), so a file missing from the repository is missing from
# them too. `dist` needs git and perl; `deb` and `test` need root.
#
# A package for MAJOR is built in the Debian suite that carries it: 15 on
# this machine (bookworm), 17 in the trixie and 18 in the sid chroot of
# scripts/chroot.sh, each with that suite's postgresql-server-dev-all,
# `pg_buildext updatecontrol` (debian/control for that suite's majors) and
# `dpkg-buildpackage -us -uc -b`, which runs the regression and isolation
# suites against the built package (dh_pgxs_test). Build trees are in
# .pkg/SUITE/, the packages and their .changes in dist/debian/SUITE/.
#
# `test` then, for each MAJOR (default: 15 17 18):
#   deb        builds the package as above;
#   lintian    that suite's lintian on it: no error, and every warning tag
#              listed, with its reason, in docs/development.md;
#   install    copies a clean chroot of that suite, which has nothing but
#              Debian's postgresql-MAJOR (cached in $SYNCWF_CACHE/clean-SUITE,
#              never the build chroot), installs the .deb there with
#              `apt-get install ./FILE.deb` and runs the package's
#              autopkgtest in it (debian/tests: installcheck, and cluster,
#              which makes a cluster with pg_createcluster, preloads syncwf
#              and starts it with pg_ctlcluster);
# and once:
#   release    prove test/release/ (META.json against the PGXN meta spec,
#              the release version agreeing everywhere);
#   pgxn zip   `make dist`, the zip unpacked in a fresh folder, built and
#              installed there with PGXS (PostgreSQL 15), then every
#              version created from it and updated to the newest in a
#              throwaway cluster with syncwf preloaded.
# Outputs in .test-out/packages/ (SYNCWF_TEST_OUT).
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=scripts/chroot.sh
source "$SYNCWF_ROOT/scripts/chroot.sh"

HOST_MAJOR=15
HOST_SUITE=bookworm
PKG_MAJORS=(15 17 18)
DIST="$SYNCWF_ROOT/dist"
PKG_WORK="$SYNCWF_ROOT/.pkg"
# Bump when the recipe of the clean chroots changes: they are rebuilt.
CLEAN_RECIPE=3
# What the host needs to build, lint and autopkgtest the packages.
HOST_PACKAGES=(debhelper build-essential postgresql-server-dev-all lintian autopkgtest unzip)

release_version() {
    perl -MJSON::PP -0777 -ne 'print decode_json($_)->{version}' "$SYNCWF_ROOT/META.json"
}

pkg_suite() { if [[ "$1" == "$HOST_MAJOR" ]]; then echo "$HOST_SUITE"; else chroot_suite "$1"; fi; }

# git_tree: a commit of the tracked files as they are now (HEAD if clean).
git_tree() {
    local rev
    rev="$(GIT_AUTHOR_NAME=syncwf GIT_AUTHOR_EMAIL=syncwf@localhost \
           GIT_COMMITTER_NAME=syncwf GIT_COMMITTER_EMAIL=syncwf@localhost \
           git -C "$SYNCWF_ROOT" stash create 2>/dev/null || true)"
    echo "${rev:-HEAD}"
}

# make_dist: dist/syncwf-VERSION.zip, every file in syncwf-VERSION/
make_dist() {
    local v zip
    v="$(release_version)"
    zip="$DIST/syncwf-$v.zip"
    mkdir -p "$DIST"
    rm -f "$zip"
    git -C "$SYNCWF_ROOT" archive --format=zip --prefix="syncwf-$v/" -o "$zip" "$(git_tree)"
    echo "$zip"
}

host_tools() {
    local missing=() p
    for p in "${HOST_PACKAGES[@]}"; do pkg_installed "$p" || missing+=("$p"); done
    ((${#missing[@]} == 0)) || apt_install "${missing[@]}"
}

# in_suite MAJOR COMMAND: run the shell COMMAND where MAJOR's package is
# built: this machine for 15, else its chroot (chroot_run: the clone at the
# same path, and no server the build-time tests start outlives it).
in_suite() {
    local m="$1" cmd="$2"
    if [[ "$m" == "$HOST_MAJOR" ]]; then
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 bash -c "$cmd"
        return
    fi
    chroot_build "$m" || return 1
    chroot_run "$(chroot_dir "$m")" "$SYNCWF_ROOT" -- bash -c "$cmd"
}

# unpack_release DIR: the release's files (as make_dist takes them) in
# DIR/syncwf-VERSION/
unpack_release() {
    mkdir -p "$1"
    git -C "$SYNCWF_ROOT" archive --format=tar --prefix="syncwf-$(release_version)/" "$(git_tree)" |
        tar -x -C "$1"
}

# build_deb MAJOR: dist/debian/SUITE/ gets MAJOR's packages and .changes
build_deb() {
    local m="$1" v suite work out
    v="$(release_version)"
    suite="$(pkg_suite "$m")"
    work="$PKG_WORK/$suite"
    out="$DIST/debian/$suite"
    rm -rf "$work" "$out"
    mkdir -p "$out"
    unpack_release "$work"
    # debian/control in the repository is this machine's: it must be what
    # control.in gives here; every suite then writes its own.
    in_suite "$m" "set -e; cd '$work/syncwf-$v'
        if [ $m = $HOST_MAJOR ]; then pg_buildext checkcontrol; fi
        pg_buildext updatecontrol
        grep -qx 'Package: postgresql-$m-syncwf' debian/control
        DEB_BUILD_OPTIONS=parallel=$(nproc) dpkg-buildpackage -us -uc -b" || return 1
    mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out/"
    ls "$out/postgresql-$m-syncwf_"*.deb >/dev/null
}

# lint_deb MAJOR LOG: that suite's lintian on MAJOR's packages; fails on an
# error, or on a warning tag that docs/development.md does not list.
lint_deb() {
    local m="$1" log="$2" out tag bad=0
    out="$DIST/debian/$(pkg_suite "$m")"
    in_suite "$m" "lintian --version; lintian --tag-display-limit 0 $out/*.changes" >"$log" 2>&1 || true
    if grep -q '^E: ' "$log"; then
        grep '^E: ' "$log" >&2
        bad=1
    fi
    for tag in $(sed -n 's/^W: [^:]*: \([a-z0-9-]*\).*/\1/p' "$log" | sort -u); do
        if ! grep -q "^| \`$tag\` |" "$SYNCWF_ROOT/docs/development.md"; then
            echo "lintian warning $tag is not listed in docs/development.md" >&2
            bad=1
        fi
    done
    return "$bad"
}

clean_dir() { echo "$SYNCWF_CACHE/clean-$(pkg_suite "$1")"; }

# clean_chroot MAJOR: the cached chroot of MAJOR's suite with nothing but
# Debian's postgresql-MAJOR (built when missing or of another recipe)
clean_chroot() {
    local m="$1" dir stamp
    dir="$(clean_dir "$m")"
    stamp="$(printf 'clean recipe %s\nsuite %s\npackages postgresql-%s' \
             "$CLEAN_RECIPE" "$(pkg_suite "$m")" "$m")"
    [[ -f "$dir/.syncwf-stamp" && "$(cat "$dir/.syncwf-stamp")" == "$stamp" ]] && return 0
    chroot_create "$dir" "$(pkg_suite "$m")" "$stamp" "/usr/lib/postgresql/$m/bin/postgres" \
        "postgresql-$m"
}

# install_test MAJOR LOGDIR: a copy of the clean chroot, the .deb installed
# with apt-get, and the package's autopkgtest run in it
install_test() {
    local m="$1" logs="$2" v run deb src rc=0
    v="$(release_version)"
    clean_chroot "$m" || return 1
    run="$(clean_dir "$m").run"
    chroot_umount_all "$run"
    rm -rf "$run"
    cp -a "$(clean_dir "$m")" "$run"
    deb="$(ls "$DIST/debian/$(pkg_suite "$m")/postgresql-$m-syncwf_"*.deb)"
    cp "$deb" "$run/tmp/"
    # The source tree autopkgtest reads its tests from: the release archive
    # with the debian/control that suite's build wrote.
    src="$PKG_WORK/autopkgtest-$m"
    rm -rf "$src"
    unpack_release "$src"
    cp "$PKG_WORK/$(pkg_suite "$m")/syncwf-$v/debian/control" "$src/syncwf-$v/debian/control"
    chroot_mount_system "$run"
    chroot "$run" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        LC_ALL=C.UTF-8 sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends ./tmp/${deb##*/}" \
        >"$logs/apt-install.log" 2>&1 </dev/null || rc=$?
    if ((rc == 0)); then
        autopkgtest --no-built-binaries --output-dir "$logs/autopkgtest" "$src/syncwf-$v" \
            -- chroot "$run" >"$logs/autopkgtest.log" 2>&1 </dev/null || rc=$?
    fi
    chroot_umount_all "$run"
    rm -rf "$run"
    return "$rc"
}

# zip_test LOG: make dist's zip, unpacked, built, installed, and every
# version created from what it installed
zip_test() {
    local v zip dir data port=54771 rc=0
    v="$(release_version)"
    zip="$(cd "$SYNCWF_ROOT" && make -s dist)" || return 1
    zip="${zip##*$'\n'}"
    [[ "$zip" == "$DIST/syncwf-$v.zip" && -f "$zip" ]] || { echo "make dist made no $DIST/syncwf-$v.zip"; return 1; }
    dir="$PKG_WORK/zip"
    rm -rf "$dir"
    mkdir -p "$dir"
    unzip -q "$zip" -d "$dir"
    make -C "$dir/syncwf-$v" PG_CONFIG="$PG_CONFIG" -j"$(nproc)" || return 1
    make -C "$dir/syncwf-$v" PG_CONFIG="$PG_CONFIG" uninstall >/dev/null 2>&1 || true
    rm -f "$("$PG_CONFIG" --sharedir)"/extension/syncwf--*.sql
    make -C "$dir/syncwf-$v" PG_CONFIG="$PG_CONFIG" install || return 1
    ensure_pg_user
    load_pg_paths
    data="$dir/data"
    fresh_pg_dir "$data"
    as_pg "$PG_BINDIR/initdb" -D "$data" -A trust -U postgres >/dev/null || return 1
    printf "shared_preload_libraries = 'syncwf'\nport = %s\nlisten_addresses = ''\nunix_socket_directories = '%s'\n" \
        "$port" "$data" >>"$data/postgresql.conf"
    as_pg "$PG_BINDIR/pg_ctl" -D "$data" -l "$data/server.log" -w start >/dev/null ||
        { cat "$data/server.log"; return 1; }
    zip_versions "$dir" "$data" "$port" || rc=$?
    as_pg "$PG_BINDIR/pg_ctl" -D "$data" -m fast -w stop >/dev/null || true
    return "$rc"
}

# zip_versions DIR SOCKET PORT: each version the zip has an update script
# from is created and updated to the default; the default is created too.
zip_versions() {
    local dir="$1" sock="$2" port="$3" want got from
    local psql=("$PG_BINDIR/psql" -XAtq -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres -d postgres)
    want="$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$dir/syncwf-$(release_version)/syncwf.control")"
    for from in $(cd "$dir/syncwf-$(release_version)" && ls syncwf--*--*.sql | sed 's/^syncwf--\([0-9.]*\)--.*/\1/' | sort -V) "$want"; do
        got="$(as_pg "${psql[@]}" -c "DROP EXTENSION IF EXISTS syncwf CASCADE" \
                 -c "CREATE EXTENSION syncwf VERSION '$from'" -c "ALTER EXTENSION syncwf UPDATE" \
                 -c "SELECT extversion FROM pg_extension WHERE extname = 'syncwf'")" || return 1
        [[ "$got" == "$want" ]] || { echo "from $from: extension version $got, not $want"; return 1; }
        echo "version $from created and updated to $want"
    done
}

# Steps of `test`: each prints a line and counts as one test.
PASSED=0
FAILED=0
SUMMARY=()
step() {
    local name="$1" log="$2" t0=$SECONDS rc=0
    shift 2
    "$@" >"$log" 2>&1 || rc=$?
    if ((rc == 0)); then
        PASSED=$((PASSED + 1))
        SUMMARY+=("$(printf '  %-30s ok (%d s)' "$name:" $((SECONDS - t0)))")
    else
        FAILED=$((FAILED + 1))
        SUMMARY+=("$(printf '  %-30s FAILED (%d s; %s)' "$name:" $((SECONDS - t0)) "${log#"$SYNCWF_ROOT"/}")")
        tail -n 30 "$log" >&2
    fi
    echo "${SUMMARY[-1]}"
    return "$rc"
}

run_tests() {
    local out="${SYNCWF_TEST_OUT:-$SYNCWF_ROOT/.test-out/packages}" m s
    rm -rf "$out"
    mkdir -p "$out"
    host_tools
    step "release checks" "$out/release.log" prove -v "$SYNCWF_ROOT/test/release/" || true
    step "PGXN zip (make dist)" "$out/zip.log" zip_test || true
    for m in "$@"; do
        s="$(pkg_suite "$m")"
        mkdir -p "$out/$m"
        step "$m ($s): deb" "$out/$m/build.log" build_deb "$m" || continue
        step "$m ($s): lintian" "$out/$m/lintian.log" lint_deb "$m" "$out/$m/lintian.txt" || true
        step "$m ($s): install, autopkgtest" "$out/$m/install.log" install_test "$m" "$out/$m" || true
    done
    {
        printf '%s\n' "${SUMMARY[@]}"
        echo "$PASSED passed, $FAILED failed"
    } >"$out/summary.txt"
    echo "$PASSED passed, $FAILED failed"
    ((FAILED == 0))
}

majors_or_all() { if (($#)); then echo "$@"; else echo "${PKG_MAJORS[@]}"; fi; }

cmd="${1:-}"
shift || true
[[ "$cmd" == dist ]] || is_root || die "building and testing packages needs root (chroots, apt)"
case "$cmd" in
    dist) make_dist ;;
    deb)
        host_tools
        for m in $(majors_or_all "$@"); do
            log "PostgreSQL $m: building the package in $(pkg_suite "$m")"
            build_deb "$m" || die "the package for PostgreSQL $m did not build"
        done
        ls -l "$DIST"/debian/*/*.deb
        ;;
    test)
        # shellcheck disable=SC2046  # majors are words
        run_tests $(majors_or_all "$@")
        ;;
    *) die "usage: $0 dist | deb [MAJOR]... | test [MAJOR]..." ;;
esac
