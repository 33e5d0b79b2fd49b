# shellcheck shell=bash
# Shared by scripts/setup.sh and scripts/test.sh (sourced, never run).
#
# Provides: the repo/PostgreSQL paths, idempotent package installation,
# the unprivileged OS user every server runs as, and the build+install step.
#
# SYNCWF_PG_MAJOR picks the PostgreSQL major (default 15, the host's; the
# test command sets it to 17 or 18 inside that major's chroot, see
# scripts/chroot.sh). SYNCWF_ASSERT=1 builds with -DUSE_ASSERT_CHECKING.

set -euo pipefail

SYNCWF_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
PG_MAJOR="${SYNCWF_PG_MAJOR:-15}"
if [[ -z "${PG_CONFIG:-}" ]]; then
    if [[ -x /usr/lib/postgresql/$PG_MAJOR/bin/pg_config ]]; then
        PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
    else
        PG_CONFIG=pg_config
    fi
fi
# The OS user that owns and runs every server the scripts start
# (PostgreSQL refuses to run as root).
PG_OS_USER="${SYNCWF_PG_USER:-postgres}"

# Debian packages both scripts need.
SYNCWF_APT_PACKAGES=("postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR"
    "postgresql-$PG_MAJOR-pgtap" "postgresql-$PG_MAJOR-cron"
    libipc-run-perl libtap-parser-sourcehandler-pgtap-perl)

log() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

is_root() { [[ "$(id -u)" -eq 0 ]]; }

# Run a command as root (directly when we are root, else via sudo).
as_root() {
    if is_root; then "$@"; else sudo "$@"; fi
}

# Run a command as the unprivileged server user, in a clean-ish environment
# given as NAME=VALUE words before the command: as_pg [VAR=val ...] cmd args
as_pg() {
    if is_root; then
        runuser -u "$PG_OS_USER" -- env "$@"
    else
        env "$@"
    fi
}

pkg_installed() {
    [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

# apt_install PACKAGE...: install these Debian packages (apt-get update first).
apt_install() {
    log "installing missing packages: $*"
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install manually: $*"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q \
        || die "apt-get update failed"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends "$@" </dev/null \
        || die "apt-get install failed: $*"
}

# ensure_packages [extra-package...]: install whatever is missing of
# SYNCWF_APT_PACKAGES + extras (+ build-essential when gcc/make are missing).
# Does not touch apt at all when everything is present.
ensure_packages() {
    local missing=() p
    for p in "${SYNCWF_APT_PACKAGES[@]}" "$@"; do
        pkg_installed "$p" || missing+=("$p")
    done
    if ! command -v gcc >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
        missing+=(build-essential)
    fi
    if ((${#missing[@]} == 0)); then
        return 0
    fi
    apt_install "${missing[@]}"
}

# The client examples (examples/; test/t/030_example_python.pl and
# 031_example_node.pl run them) need psycopg 3 for Debian's /usr/bin/python3,
# a node, and node-postgres as examples/node/package-lock.json pins it, in
# examples/node/node_modules. Commands are checked rather than package names,
# so a node installed otherwise (NodeSource's, say) is used as it is.
#
# node_modules come from $SYNCWF_CACHE/npm/SHA/ (SHA: the lockfile's
# sha256), outside the clone: `npm ci` fills it once per lockfile (npm from
# Debian when missing; the only step that needs the npm registry), later
# runs copy it. The copy in the clone carries the lockfile's sha256 in
# node_modules/.syncwf-lock-sha256 and is left alone while that matches, so
# inside a chroot, where the host's run has made the copy already, neither
# npm nor the cache is needed.
SYNCWF_CACHE="${SYNCWF_CACHE:-/var/cache/syncwf}"
ensure_example_runtimes() {
    local missing=()
    /usr/bin/python3 -c 'import psycopg' >/dev/null 2>&1 || missing+=(python3-psycopg)
    command -v node >/dev/null 2>&1 || missing+=(nodejs)
    ((${#missing[@]} == 0)) || apt_install "${missing[@]}"
    ensure_node_modules
}

ensure_node_modules() {
    local dir="$SYNCWF_ROOT/examples/node" sum cache tmp
    sum="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
    [[ "$(cat "$dir/node_modules/.syncwf-lock-sha256" 2>/dev/null)" == "$sum" ]] && return 0
    cache="$SYNCWF_CACHE/npm/$sum"
    if [[ ! -d "$cache/node_modules" ]]; then
        command -v npm >/dev/null 2>&1 || apt_install npm
        log "installing examples/node's packages into $cache (npm ci)"
        mkdir -p "$SYNCWF_CACHE/npm" || die "cannot create $SYNCWF_CACHE/npm (set SYNCWF_CACHE)"
        rm -rf "$cache"
        tmp="$(mktemp -d "$cache.XXXXXX")"
        cp "$dir/package.json" "$dir/package-lock.json" "$tmp/"
        (cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts \
            --cache "$SYNCWF_CACHE/npm/cache") >"$tmp.log" 2>&1 </dev/null \
            || { cat "$tmp.log"; rm -rf "$tmp"; die "npm ci failed (examples/node)"; }
        rm -f "$tmp.log"
        # Another run may have filled it meanwhile: then keep that one.
        mv -T "$tmp" "$cache" 2>/dev/null || rm -rf "$tmp"
    fi
    rm -rf "$dir/node_modules"
    cp -a "$cache/node_modules" "$dir/node_modules"
    echo "$sum" >"$dir/node_modules/.syncwf-lock-sha256"
}

# Create the unprivileged OS user if it does not exist.
ensure_pg_user() {
    is_root || { PG_OS_USER="$(id -un)"; return 0; }
    if ! id -u "$PG_OS_USER" >/dev/null 2>&1; then
        log "creating system user $PG_OS_USER"
        local grp=()
        if getent group "$PG_OS_USER" >/dev/null 2>&1; then
            grp=(-g "$PG_OS_USER")
        else
            grp=(-U)
        fi
        useradd --system --create-home --home-dir "/var/lib/$PG_OS_USER" \
            --shell /bin/bash "${grp[@]}" "$PG_OS_USER"
    fi
    local home
    home="$(getent passwd "$PG_OS_USER" | cut -d: -f6)"
    if [[ -n "$home" && ! -d "$home" ]]; then
        mkdir -p "$home" && chown "$PG_OS_USER:" "$home"
    fi
}

# Make a fresh directory owned by the server user; verify the user can reach it.
fresh_pg_dir() {
    local d="$1"
    rm -rf "$d"
    mkdir -p "$d"
    is_root && chown "$PG_OS_USER:" "$d"
    as_pg test -w "$d" \
        || die "user $PG_OS_USER cannot write $d (is a parent directory not traversable?)"
}

# Clean build (PGXS here has no header dependency tracking) and install.
# Each major builds out of tree in .build/pgN/ (a PGXS VPATH build), so
# builds for different majors never mix objects. The Makefile's CFLAGS make
# every warning an error; SYNCWF_ASSERT=1 adds -DUSE_ASSERT_CHECKING.
SYNCWF_BUILD_DIR="$SYNCWF_ROOT/.build/pg$PG_MAJOR"
build_and_install() {
    local jobs mk
    jobs="$(nproc 2>/dev/null || echo 2)"
    mk=(make -C "$SYNCWF_BUILD_DIR" -f "$SYNCWF_ROOT/Makefile" PG_CONFIG="$PG_CONFIG"
        SYNCWF_ASSERT="${SYNCWF_ASSERT:-0}")
    log "building syncwf for PostgreSQL $PG_MAJOR in ${SYNCWF_BUILD_DIR#"$SYNCWF_ROOT"/}" \
        "(clean, -Werror$([[ "${SYNCWF_ASSERT:-0}" == 1 ]] && echo ", assertions on"))"
    mkdir -p "$SYNCWF_BUILD_DIR/src"
    "${mk[@]}" clean >/dev/null
    "${mk[@]}" -j"$jobs" >"$SYNCWF_BUILD_DIR/build.log" 2>&1 \
        || { cat "$SYNCWF_BUILD_DIR/build.log"; die "build failed (PostgreSQL $PG_MAJOR)"; }
    log "installing syncwf"
    # Scripts an earlier install left that this tree no longer ships (the
    # full install scripts of older versions) would install those versions
    # instead of the update chain: remove them first.
    as_root "${mk[@]}" uninstall >/dev/null 2>&1 || true
    as_root rm -f "$("$PG_CONFIG" --sharedir)"/extension/syncwf--*.sql
    as_root "${mk[@]}" install >/dev/null || die "make install failed"
}

# Paths that only exist once the packages are in place.
# shellcheck disable=SC2034  # used by the scripts that source this file
load_pg_paths() {
    PG_BINDIR="$("$PG_CONFIG" --bindir)"
    PGXS_DIR="$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")"   # .../lib/pgxs/src
    PG_REGRESS="$PGXS_DIR/test/regress/pg_regress"
    PG_PERL_DIR="$PGXS_DIR/test/perl"
}

# Everything both scripts do before their own part.
syncwf_prepare() {
    ensure_packages "$@"
    ensure_pg_user
    command -v "$PG_CONFIG" >/dev/null 2>&1 || die "$PG_CONFIG not found"
    load_pg_paths
    build_and_install
}
