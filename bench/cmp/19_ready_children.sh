# shellcheck shell=bash
# bench/cmp/19_ready_children.sh: comparison 19, the cost of handing a
# parent's slot on as a function of the children waiting for it.
#
# Parent row b19/all of 1 slot over the pattern b19/* (1 slot each): one
# keyed request holds the slot, and N more, each on a child of its own,
# wait for the parent, so N children are ready.  Then $READY_RELEASES
# releases, each its own transaction (psql -f, autocommit), each handing
# the slot to the next waiter across the children: the group pass finds
# the first ready child and grants it.  Contenders, alternating rounds:
# N = $READY_SMALL and N = $READY_BIG.  The time per release is what a
# release costs end to end, statement and commit included.
# Target: the time per release at N = $READY_BIG at most 1.5 x that at
# N = $READY_SMALL: the order among children costs O(log n) of the ready
# children (src/engine/group_ready.c), not a walk of them all.
#
# Sourced by scripts/bench.sh (see Layout there); docs/development.md
# says how to add a comparison.

READY_SMALL=1000
READY_BIG=100000
READY_RELEASES=1000      # at most READY_SMALL: each release goes to a waiting child
declare -A READY_US=()

# ready_round N ROUND: set N ready children up, time the releases; prints
# microseconds per release
ready_round() {
    local n=$1 r=$2 f=$BENCH_DIR/ready-releases.sql t0 t1 i
    q "DELETE FROM sync_state WHERE name LIKE 'sem/b19/%'" >/dev/null
    q "SELECT count(*) FROM (SELECT sync_request('sem/b19/k' || i, 'b19-' || i)
                               FROM generate_series(0, $n) i) x" >/dev/null
    for ((i = 0; i < READY_RELEASES; i++)); do
        echo "SELECT sync_release('sem/b19/k$i', 'b19-$i');"
    done >"$f"
    wait_idle
    t0=$(date +%s%N)
    as_pg "${PSQL[@]}" -d "$DB" -f "$f" >/dev/null
    t1=$(date +%s%N)
    [[ $(q "SELECT workflowkey FROM sync_state WHERE name LIKE 'sem/b19/%' AND held") == "b19-$READY_RELEASES" ]] ||
        die "comparison 19, N = $n round $r: the slot did not go to the children in order"
    q "DELETE FROM sync_state WHERE name LIKE 'sem/b19/%'" >/dev/null
    echo $(((t1 - t0) / 1000 / READY_RELEASES))
}

cmp19_setup() {
    want 19 && [[ $BENCH_SKIP_SYNCWF != 1 ]] || return 0
    q "INSERT INTO sync_limit (name, sizelimit) VALUES ('b19/all', 1);
       INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('b19/*', 1, 'b19/all')" >/dev/null
}

cmp19_run() {
    local r n small=() big=() ms mb
    if want 19 && [[ $BENCH_SKIP_SYNCWF != 1 ]]; then
        log "comparison 19: $READY_RELEASES hand-offs of a parent's slot with $READY_SMALL and $READY_BIG children waiting, $BENCH_LAT_ROUNDS rounds"
        for ((r = 1; r <= BENCH_LAT_ROUNDS; r++)); do
            for n in "$READY_SMALL" "$READY_BIG"; do
                READY_US[$n-$r]=$(ready_round "$n" "$r")
                log "comparison 19 round $r: $n children waiting, ${READY_US[$n-$r]} us per release"
                if [[ $n == "$READY_SMALL" ]]; then small+=("${READY_US[$n-$r]}"); else big+=("${READY_US[$n-$r]}"); fi
            done
        done
        ms=$(median "${small[@]}")
        mb=$(median "${big[@]}")
        add_summary "19. hand-off under a parent, ready children" "us per release handing the parent's slot to the next of $READY_BIG / of $READY_SMALL children waiting (median of rounds: $mb / $ms)" \
            "$(ratio "$mb" "$ms")" "<=" 1.5
    else
        add_summary "19. hand-off under a parent, ready children" "us per release, $READY_BIG / $READY_SMALL children waiting" "n/a" "<=" 1.5
    fi
}

cmp19_describe() {
    cat <<EOF
19. **Children waiting for a parent**: a parent row \`b19/all\` of 1 slot
   over the pattern \`b19/*\` (1 slot each). One keyed request holds the
   slot and N more wait, each on a child of its own. Then $READY_RELEASES
   releases, each its own transaction, each handing the slot to the next
   waiter across the children (the group pass finds the first ready
   child). N = $READY_SMALL against N = $READY_BIG, alternating, $BENCH_LAT_ROUNDS
   rounds; the time per release, statement and commit included.
EOF
}
