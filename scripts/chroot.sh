# shellcheck shell=bash
# Debian chroots that run the test suite against PostgreSQL majors the host
# does not have (sourced by scripts/test.sh; `bash scripts/chroot.sh build 17`
# builds one by hand, `... shell 17` opens a root shell in it).
#
# A chroot is built from Debian's own packages: debootstrap --variant=minbase
# of the suite that carries the major (17: trixie, 18: sid), then Debian's
# postgresql-N, -server-dev-N, -pgtap, -cron, pgbouncer,
# prometheus-postgres-exporter, patroni with python3-etcd (its etcd and
# etcd3 DCS; patroni depends on one of several DCS clients and apt may pick
# another) and etcd (the HA test), the Perl test modules, and what builds
# and lints a Debian package (scripts/package.sh). It lives outside
# the clone, in $SYNCWF_CACHE (default /var/cache/syncwf), as pgN-SUITE/,
# and is reused while its stamp file matches the recipe below. A changed
# recipe number or suite rebuilds it; a package list that only grew installs
# the missing packages into the cached chroot (so a cache made before a
# package joined the list gets it, without a rebuild). Building takes a few minutes; reusing it, none. Needs root
# (debootstrap, chroot, mount).
#
# While tests run, the chroot gets /proc, a tmpfs on /dev/shm (mode 1777;
# PostgreSQL's dynamic shared memory lives there) and the clone itself,
# bind-mounted at the same absolute path, so paths in logs are the host's.
# The postgresql-common hooks never start a server there: policy-rc.d
# forbids starting services and createcluster.conf creates no default
# cluster.

SYNCWF_CACHE="${SYNCWF_CACHE:-/var/cache/syncwf}"
# Bump when the recipe changes: every cached chroot is then rebuilt. (A
# package added to chroot_packages needs no bump: chroot_build installs it
# into a cached chroot.)
SYNCWF_CHROOT_RECIPE=3

# The Debian suite that carries PostgreSQL major $1.
chroot_suite() {
    case "$1" in
        17) echo trixie ;;
        18) echo sid ;;
        *) return 1 ;;
    esac
}

chroot_dir() { echo "$SYNCWF_CACHE/pg$1-$(chroot_suite "$1")"; }

# The client examples' runtimes (python3-psycopg, nodejs) are not part of
# the recipe: scripts/suite.sh installs them where missing (common.sh,
# ensure_example_runtimes), so cached chroots gain them without a rebuild.
chroot_packages() {
    local m="$1"
    echo "postgresql-$m postgresql-server-dev-$m postgresql-$m-pgtap postgresql-$m-cron" \
         "pgbouncer prometheus-postgres-exporter libipc-run-perl libtap-parser-sourcehandler-pgtap-perl" \
         "patroni python3-etcd etcd-server etcd-client" \
         "make gcc libc6-dev" \
         "debhelper build-essential postgresql-server-dev-all lintian" \
         "procps ca-certificates"
}

# host_apt_uri NAME: the first URI of the host's apt sources (deb822
# "URIs:" or one-line "deb") whose path ends in /NAME, or nothing.
host_apt_uri() {
    local f
    for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list; do
        [[ -f "$f" ]] || continue
        awk -v name="$1" '$1 == "URIs:" || $1 == "deb" {
                 for (i = 2; i <= NF; i++) if ($i ~ ("^[a-z]+://.*/" name "/?$")) { print $i; exit }
             }' "$f"
    done | head -n 1
}

# The package mirror the host's apt uses for Debian (so that a chroot is
# fetched from the same registry), or nothing: debootstrap's default.
host_debian_mirror() { host_apt_uri debian; }

# The security mirror the host's apt uses, or nothing.
host_debian_security_mirror() { host_apt_uri debian-security; }

# chroot_updates_sources SUITE MIRROR: the apt lines of a stable SUITE's
# updates and security updates, as a Debian server has them (debootstrap
# writes only SUITE itself); nothing for sid.  A package built against the
# newest point release depends on it.
chroot_updates_sources() {
    local suite="$1" mirror="$2" security
    [[ "$suite" == sid ]] && return 0
    security="$(host_debian_security_mirror)"
    echo "deb $mirror $suite-updates main"
    echo "deb ${security:-http://deb.debian.org/debian-security} $suite-security main"
}

chroot_stamp_text() {
    printf 'recipe %s\nsuite %s\npackages %s\n' "$SYNCWF_CHROOT_RECIPE" \
        "$(chroot_suite "$1")" "$(chroot_packages "$1")"
}

chroot_ready() {
    local dir; dir="$(chroot_dir "$1")"
    [[ -f "$dir/.syncwf-stamp" ]] && [[ "$(cat "$dir/.syncwf-stamp")" == "$(chroot_stamp_text "$1")" ]] \
        && [[ -x "$dir/usr/lib/postgresql/$1/bin/pg_config" ]]
}

# A cached chroot of the current recipe and suite, whatever its package
# list: chroot_top_up can bring it up to date.
chroot_base_ready() {
    local dir; dir="$(chroot_dir "$1")"
    [[ -f "$dir/.syncwf-stamp" ]] \
        && [[ "$(head -n 2 "$dir/.syncwf-stamp")" == "$(chroot_stamp_text "$1" | head -n 2)" ]] \
        && [[ -x "$dir/usr/lib/postgresql/$1/bin/pg_config" ]]
}

# chroot_apt_install DIR LOG PACKAGE...: apt-get update and install the
# packages (without recommends) in the chroot DIR, whose /proc is mounted,
# with a clean environment, appending the output to LOG; then drop the
# downloaded archives. Returns apt-get's status.
chroot_apt_install() {
    local dir="$1" log="$2" rc=0
    shift 2
    chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        LC_ALL=C.UTF-8 sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $*" \
        >>"$log" 2>&1 </dev/null || rc=$?
    chroot "$dir" apt-get clean >/dev/null 2>&1 || true
    return "$rc"
}

# chroot_top_up MAJOR: install the packages of chroot_packages that the
# cached chroot lacks (only those: installed ones are not upgraded), then
# stamp it with the current list. Idempotent; on failure the old stamp stays
# and the next run tries again.
chroot_top_up() {
    local m="$1" dir p missing=() rc=0
    dir="$(chroot_dir "$m")"
    for p in $(chroot_packages "$m"); do
        # shellcheck disable=SC2016  # ${Status} is dpkg-query's, not ours
        [[ "$(chroot "$dir" dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == "install ok installed" ]] \
            || missing+=("$p")
    done
    if ((${#missing[@]})); then
        echo "installing into the cached PostgreSQL $m chroot: ${missing[*]}"
        chroot_mount_system "$dir"
        chroot_apt_install "$dir" "$dir.log" "${missing[@]}" || rc=$?
        chroot_umount_all "$dir"
        if ((rc != 0)); then
            tail -n 20 "$dir.log" >&2
            echo "installing ${missing[*]} into the PostgreSQL $m chroot failed (log: $dir.log)" >&2
            return 1
        fi
    fi
    chroot_stamp_text "$m" >"$dir/.syncwf-stamp"
}

# chroot_mount_system DIR: /proc and a 1777 tmpfs on /dev/shm (idempotent).
chroot_mount_system() {
    local dir="$1"
    mkdir -p "$dir/proc" "$dir/dev/shm"
    mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
    mountpoint -q "$dir/dev/shm" || mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$dir/dev/shm"
    chmod 1777 "$dir/dev/shm"
}

# chroot_umount_all DIR: undo every mount below DIR, innermost first.
chroot_umount_all() {
    local dir="$1" m
    [[ -d "$dir" ]] || return 0
    # /proc/mounts escapes spaces as \040; our paths have none.
    while read -r m; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done < <(awk -v d="$dir" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r)
}

# chroot_bind_repo DIR ROOT: the clone at the same path inside the chroot.
chroot_bind_repo() {
    local dir="$1" root="$2"
    mkdir -p "$dir$root"
    mountpoint -q "$dir$root" || mount --bind "$root" "$dir$root"
}

# chroot_run DIR ROOT [VAR=VALUE]... -- COMMAND...: run COMMAND in the
# chroot DIR, with its /proc and /dev/shm and the clone ROOT mounted, an
# environment of nothing but PATH, HOME, LANG and the given variables, and
# a PID namespace of its own: the command's shell is its init and reaps
# the postmasters tests kill -9 at once (left to this machine's init, a
# killed postmaster can stay a zombie for a while, and its postmaster.pid
# then looks alive to the next start), and nothing it started outlives
# it. Unmounts everything afterwards; returns COMMAND's status.
chroot_run() {
    local dir="$1" root="$2" envv=() rc=0
    shift 2
    while (($#)) && [[ "$1" != -- ]]; do envv+=("$1"); shift; done
    shift
    chroot_mount_system "$dir"
    chroot_bind_repo "$dir" "$root"
    unshare --pid --fork --mount-proc="$dir/proc" \
        chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        "${envv[@]}" "$@" </dev/null || rc=$?
    chroot_umount_all "$dir"
    return "$rc"
}

# chroot_build MAJOR: build (or rebuild) the chroot for MAJOR unless ready;
# a cached one of the same recipe only gets the packages it lacks.
# Prints progress to stdout; returns non-zero with a reason on stderr.
chroot_build() {
    local m="$1" suite
    suite="$(chroot_suite "$m")" || { echo "no Debian suite known for PostgreSQL $m" >&2; return 1; }
    chroot_ready "$m" && return 0
    if chroot_base_ready "$m"; then
        chroot_top_up "$m"
        return
    fi
    # shellcheck disable=SC2046  # the package list is words
    chroot_create "$(chroot_dir "$m")" "$suite" "$(chroot_stamp_text "$m")" \
        "/usr/lib/postgresql/$m/bin/pg_config" $(chroot_packages "$m")
}

# chroot_create DIR SUITE STAMP CHECK PACKAGE...: debootstrap SUITE
# (minbase) into DIR.building, where no service starts and no default
# cluster is made, install the packages, check that the file CHECK exists
# in it, write STAMP to .syncwf-stamp and move it to DIR.  Returns non-zero
# with a reason on stderr; DIR is untouched then.
chroot_create() {
    local dir="$1" suite="$2" stamp="$3" check="$4" tmp mirror rc=0
    shift 4
    [[ "$(id -u)" -eq 0 ]] || { echo "building a chroot needs root" >&2; return 1; }
    if ! command -v debootstrap >/dev/null 2>&1; then
        echo "installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap </dev/null \
            || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
                    --no-install-recommends debootstrap </dev/null; } \
            || { echo "cannot install debootstrap" >&2; return 1; }
    fi
    if ! mkdir -p "$SYNCWF_CACHE" 2>/dev/null || [[ ! -w "$SYNCWF_CACHE" ]]; then
        echo "cannot create the chroot cache $SYNCWF_CACHE (set SYNCWF_CACHE)" >&2
        return 1
    fi
    tmp="$dir.building"
    chroot_umount_all "$tmp"
    rm -rf "$tmp"
    mirror="$(host_debian_mirror)"
    echo "building $dir: debootstrap $suite into $tmp"
    # shellcheck disable=SC2086  # an empty mirror means debootstrap's default
    if ! debootstrap --variant=minbase "$suite" "$tmp" $mirror >"$tmp.log" 2>&1; then
        tail -n 20 "$tmp.log" >&2
        echo "debootstrap $suite failed (log: $tmp.log)" >&2
        return 1
    fi
    # No service starts inside, and no default cluster is created.
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
    chmod 755 "$tmp/usr/sbin/policy-rc.d"
    mkdir -p "$tmp/etc/postgresql-common"
    echo "create_main_cluster = false" >"$tmp/etc/postgresql-common/createcluster.conf"
    # sid's Release file can be past its Valid-Until by this machine's clock.
    echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99syncwf"
    chroot_updates_sources "$suite" "${mirror:-http://deb.debian.org/debian}" \
        >"$tmp/etc/apt/sources.list.d/syncwf-updates.list"
    cp /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
    chroot_mount_system "$tmp"
    chroot_apt_install "$tmp" "$tmp.log" "$@" || rc=$?
    if ((rc == 0)) && ! chroot "$tmp" test -e "$check"; then
        rc=1
    fi
    chroot_umount_all "$tmp"
    if ((rc != 0)); then
        tail -n 20 "$tmp.log" >&2
        echo "installing $* in the $suite chroot failed (log: $tmp.log)" >&2
        return 1
    fi
    echo "$stamp" >"$tmp/.syncwf-stamp"
    chroot_umount_all "$dir"
    rm -rf "$dir"
    mv "$tmp" "$dir"
    mv "$tmp.log" "$dir.log"
    echo "chroot ready: $dir"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -euo pipefail
    case "${1:-}" in
        build) chroot_build "${2:?major}" ;;
        shell)
            d="$(chroot_dir "${2:?major}")"
            chroot_ready "$2" || { echo "no chroot for $2; run: $0 build $2" >&2; exit 1; }
            root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
            chroot_mount_system "$d"; chroot_bind_repo "$d" "$root"
            trap 'chroot_umount_all "$d"' EXIT
            chroot "$d" /bin/bash -c "cd '$root' && exec bash"
            ;;
        *) echo "usage: $0 build|shell MAJOR" >&2; exit 2 ;;
    esac
fi
