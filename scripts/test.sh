#!/usr/bin/env bash
# Run every syncwf test layer on every tested PostgreSQL major, from scratch
# (README command 2, `make test`, .ci/run).
#
#   bash scripts/test.sh              PostgreSQL 15, 17 and 18
#   bash scripts/test.sh --pg 17      one major only (repeat --pg for more);
#                                     `make test PG=17` does the same
#
# 15 runs on this machine (Debian 12's own packages). 17 and 18 run in
# Debian chroots built from Debian's packages (trixie for 17, sid for 18) and
# cached in /var/cache/syncwf/ (SYNCWF_CACHE), outside the clone: the first
# run on a machine builds them (a few minutes), later runs reuse them. Each
# major runs scripts/suite.sh (build with assertions, pg_regress, isolation,
# pgTAP, Perl TAP) with its outputs in .test-out/pgN/. A major whose chroot
# cannot be built, or whose run ends without a summary, counts as a failure
# with the reason, never as a skip.
#
# Then the packages layer (scripts/package.sh test): the release checks,
# the PGXN zip built and installed, and for each major its Debian package
# built in its suite, linted, installed into a clean chroot and tested by
# its autopkgtest.
#
# Prints each major's per-layer counts and the packages layer's steps,
# then, as its last line, "N passed, N failed" over all of them. Exit
# status 0 iff nothing failed. SYNCWF_LAYERS names the layers to run:
# those of scripts/suite.sh and "packages" (all by default). The SYNCWF_*
# variables of scripts/suite.sh (ONLY, NO_BUILD, ASSERT, VALGRIND) and the
# seeds and sizes of the randomized TAP tests (SYNCWF_STRESS_SEED,
# SYNCWF_FUZZ_SEED, SYNCWF_FUZZ_ITERATIONS) are passed on to every major;
# SYNCWF_VALGRIND=1 runs on the host's major only, without packages.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=scripts/chroot.sh
source "$SYNCWF_ROOT/scripts/chroot.sh"

HOST_MAJOR="$PG_MAJOR"          # 15 unless SYNCWF_PG_MAJOR says otherwise
ALL_MAJORS=(15 17 18)

majors=()
while (($#)); do
    case "$1" in
        --pg) [[ -n "${2:-}" ]] || die "--pg needs a major: 15, 17 or 18"; majors+=("$2"); shift 2 ;;
        --pg=*) majors+=("${1#--pg=}"); shift ;;
        -h|--help) sed -n '2,30p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) die "usage: $0 [--pg 15|17|18]..." ;;
    esac
done
if ((${#majors[@]} == 0)) && [[ -n "${PG:-}" ]]; then
    read -r -a majors <<<"${PG//,/ }"
fi
((${#majors[@]})) || majors=("${ALL_MAJORS[@]}")
if [[ "${SYNCWF_VALGRIND:-0}" != 0 ]]; then majors=("$HOST_MAJOR"); fi
for m in "${majors[@]}"; do
    [[ " ${ALL_MAJORS[*]} " == *" $m "* ]] || die "PostgreSQL $m is not tested here (tested: ${ALL_MAJORS[*]})"
done

is_root || die "the test command runs as root (it installs packages and builds chroots)"
LAYERS=" ${SYNCWF_LAYERS:-regress isolation pgtap tap packages} "
SUITE_LAYERS="$(for l in $LAYERS; do [[ $l == packages ]] || echo "$l"; done | xargs)"
RUN_PACKAGES=0
if [[ "$LAYERS" == *" packages "* && "${SYNCWF_VALGRIND:-0}" == 0 ]]; then RUN_PACKAGES=1; fi
# node-postgres for the Node.js example, in examples/node/node_modules: made
# here, on this machine, where npm and its cache are (see common.sh); the
# chroots see it through the clone. If that fails, the Node.js example's
# test fails and says so.
if [[ " ${SYNCWF_LAYERS:-tap} " == *" tap "* ]] && ! (ensure_node_modules); then
    echo "warning: examples/node/node_modules could not be installed" >&2
fi
OUT_ROOT="$SYNCWF_ROOT/.test-out"
rm -rf "$OUT_ROOT"
mkdir -p "$OUT_ROOT"
T0=$SECONDS

# Environment handed to scripts/suite.sh in a chroot, beside chroot_run's
# PATH, HOME and LANG: nothing of the host's
# but these.
suite_env() {
    local v
    echo "TZ=${TZ:-UTC}"
    for v in SYNCWF_LAYERS SYNCWF_ONLY SYNCWF_NO_BUILD SYNCWF_ASSERT CI PG_TEST_TIMEOUT_DEFAULT \
             SYNCWF_STRESS_SEED SYNCWF_FUZZ_SEED SYNCWF_FUZZ_ITERATIONS; do
        [[ -n "${!v:-}" ]] && echo "$v=${!v}"
    done
    return 0
}

declare -A V_PASS V_FAIL V_TIME V_NOTE
run_major() {
    local m="$1" out="$OUT_ROOT/pg$1" t0=$SECONDS rc=0
    log "PostgreSQL $m"
    mkdir -p "$out"
    if [[ "$m" == "$HOST_MAJOR" ]]; then
        SYNCWF_PG_MAJOR="$m" SYNCWF_TEST_OUT="$out" bash "$SYNCWF_ROOT/scripts/suite.sh" || rc=$?
    else
        local dir; dir="$(chroot_dir "$m")"
        if ! chroot_build "$m" 2>"$OUT_ROOT/chroot-pg$m.err"; then
            V_NOTE[$m]="its chroot could not be built: $(tail -n 1 "$OUT_ROOT/chroot-pg$m.err")"
            cat "$OUT_ROOT/chroot-pg$m.err" >&2
            V_PASS[$m]=0; V_FAIL[$m]=1; V_TIME[$m]=$((SECONDS - t0)); return
        fi
        local envv=()
        mapfile -t envv < <(suite_env)
        chroot_run "$dir" "$SYNCWF_ROOT" "${envv[@]}" SYNCWF_PG_MAJOR="$m" SYNCWF_TEST_OUT="$out" \
            -- bash "$SYNCWF_ROOT/scripts/suite.sh" || rc=$?
    fi
    V_TIME[$m]=$((SECONDS - t0))
    local last=""
    [[ -f "$out/summary.txt" ]] && last="$(tail -n 1 "$out/summary.txt")"
    if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        V_PASS[$m]=${BASH_REMATCH[1]}; V_FAIL[$m]=${BASH_REMATCH[2]}
        if ((rc != 0 && V_FAIL[$m] == 0)); then
            V_FAIL[$m]=1; V_NOTE[$m]="the suite exited with status $rc"
        fi
    else
        V_PASS[$m]=0; V_FAIL[$m]=1
        V_NOTE[$m]="the suite ended (status $rc) without a summary; see its output above"
    fi
}

pkg_majors=("${majors[@]}")
if [[ -n "$SUITE_LAYERS" ]]; then
    export SYNCWF_LAYERS="$SUITE_LAYERS"
    for m in "${majors[@]}"; do
        run_major "$m"
    done
else
    majors=()
fi

# The packages layer, after the majors: it installs the PGXN zip's build
# over the one scripts/suite.sh installed for 15.
PKG_TIME=0
if ((RUN_PACKAGES)); then
    log "packages"
    t0=$SECONDS
    SYNCWF_TEST_OUT="$OUT_ROOT/packages" bash "$SYNCWF_ROOT/scripts/package.sh" test "${pkg_majors[@]}" || true
    PKG_TIME=$((SECONDS - t0))
fi

log "summary over PostgreSQL ${majors[*]} ($((SECONDS - T0)) s; outputs in $OUT_ROOT/pgN)"
TOTAL_P=0; TOTAL_F=0
for m in "${majors[@]}"; do
    printf 'PostgreSQL %s (%d s)\n' "$m" "${V_TIME[$m]}"
    if [[ -f "$OUT_ROOT/pg$m/summary.txt" ]]; then
        sed '$d' "$OUT_ROOT/pg$m/summary.txt"
    fi
    printf '  %-22s %d passed, %d failed%s\n' "all layers:" "${V_PASS[$m]}" "${V_FAIL[$m]}" \
        "${V_NOTE[$m]:+ (${V_NOTE[$m]})}"
    TOTAL_P=$((TOTAL_P + V_PASS[$m])); TOTAL_F=$((TOTAL_F + V_FAIL[$m]))
done
if ((RUN_PACKAGES)); then
    printf 'packages (%d s)\n' "$PKG_TIME"
    last=""
    [[ -f "$OUT_ROOT/packages/summary.txt" ]] && last="$(tail -n 1 "$OUT_ROOT/packages/summary.txt")"
    if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        sed '$d' "$OUT_ROOT/packages/summary.txt"
        TOTAL_P=$((TOTAL_P + BASH_REMATCH[1])); TOTAL_F=$((TOTAL_F + BASH_REMATCH[2]))
    else
        echo "  the packages layer ended without a summary; see its output above"
        TOTAL_F=$((TOTAL_F + 1))
    fi
fi
echo "$TOTAL_P passed, $TOTAL_F failed"
((TOTAL_F == 0))
