# shellcheck shell=bash
# bench/lib/report.sh:
# the report of scripts/bench.sh (sourced by it, never run).
#
# write_report writes $BENCH_OUT (docs/benchmarks.md for a full run)
# from the figures the comparisons left: the summary rows (SUMMARY),
# the per-round rows (ROUND_ROWS), each comparison's item in "What is
# compared" (cmpN_describe, in the comparisons' order) and the detail
# sections of those that have one (cmpN_details, in REPORT_DETAILS's
# order).  Sets ELAPSED.

# the order of the detail sections after the per-round table; a new
# comparison with a cmpN_details adds its number at the end
REPORT_DETAILS="11 12 3 7 9 8 6 4 14 15 16 17 18"

write_report() {
    local c
    ELAPSED=$((SECONDS - T0))
    LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
    CPU=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)
    MEM=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
    if [[ $BENCH_SKIP_SYNCWF == 1 ]]; then
        CLUSTER_SYNCWF="syncwf not loaded (BENCH_SKIP_SYNCWF=1)"
    else
        CLUSTER_SYNCWF="shared_preload_libraries = 'syncwf', syncwf.max_locks = $MAX_LOCKS, syncwf.max_entries = $MAX_ENTRIES, syncwf.max_holders = $MAX_HOLDERS, syncwf.database = '$DB' (the keyed holds and the worker live in the bench database; other syncwf settings at their defaults)"
    fi
    PARTIAL_NOTE=
    if ((PARTIAL)); then
        ran=
        for c in "${CMPS[@]}"; do want "$c" && ran+=" $c"; done
        PARTIAL_NOTE="
**Partial run** (BENCH_ONLY=\`$BENCH_ONLY\`): only comparisons$ran ran; the others are marked not run.
"
    fi
    PGBENCH_CMD="pgbench -n -M prepared -c $CLIENTS -j $THREADS -T $BENCH_SECONDS -f <script> $DB"

    mkdir -p "$(dirname "$BENCH_OUT")"
    {
        cat <<EOF
# syncwf benchmarks

Written by \`make bench\` (scripts/bench.sh); do not edit by hand. Every
figure on this page comes from the run of $(date -u '+%Y-%m-%d %H:%M UTC'), which took ${ELAPSED} s.
$PARTIAL_NOTE
## What is compared

Comparisons 1 to 4 measure syncwf's session holds against PostgreSQL's own
session-level advisory locks (\`pg_advisory_lock\` / \`pg_advisory_unlock\`),
which live in the same shared-memory lock manager as table locks.
Comparisons 5 to 7 measure keyed holds (\`sync_request\` / \`sync_release\`
with a holder key, kept in the \`sync_state\` table): against a semaphore
written in plain SQL (5), at the front of a deep queue (6), and the hand-off
to a LISTENing controller (7). Comparisons 8 and 9 measure launch-plan
concurrency policies (\`sync_execution_create\` / \`sync_execution_update\`):
against the count-then-insert Flyte's admin does (8), and the hand-off of a
freed slot to a pending execution (9). Comparison 10 measures what 1.5's
capacity model costs: weighted slots, shared mutex holds and limits from a
pattern row, and what 1.8's nested limits cost (a parent row counted at
every grant), against the plain acquire of comparison 1; comparison 11 how
late a rate-limited semaphore grants after each token's due time; comparison 12
how much of a semaphore best-effort queueing keeps busy that a strict queue
leaves idle; comparison 13 what counting per-lock statistics costs the
acquire of comparison 1. Within a comparison the contenders
are interleaved (syncwf, advisory, syncwf, advisory, ...), after an unrecorded
warm-up of ${BENCH_WARMUP} s each, so that machine noise hits all of them; each
contender's figure is the median of its rounds (comparisons 10 and 13 mix
their contenders within each run instead: see there). One pgbench transaction is one
acquire (or request) plus one release, each its own statement (and its own
implicit transaction) unless said otherwise.

EOF
        for c in "${CMPS[@]}"; do
            "cmp${c}_describe"
        done
        cat <<EOF

## How to reproduce

\`\`\`
make bench                    # BENCH_SECONDS=N to change the length of each run
BENCH_ONLY=keyed make bench   # only comparisons 5-7 and 15 (engine: 1-4, 10-14 and 16-18, launch: 8-9,
                              # or numbers, e.g. BENCH_ONLY="1 5"); a partial
                              # run writes .bench/benchmarks.md
SYNCWF_NO_BUILD=1 make bench  # benchmark the syncwf already installed
\`\`\`

It builds and installs the extension (\`make && make install\`), creates a
throwaway cluster in \`.bench/\` (unix socket only) with the settings below, runs
the comparisons, prints this report and writes it here. Logs of every run stay
in \`.bench/logs/\`.

## Machine and settings

| | |
| --- | --- |
| date | $(date -u '+%Y-%m-%d %H:%M:%S UTC') |
| CPUs (nproc) | $(nproc) |
| CPU model | ${CPU:-unknown} |
| memory | $MEM |
| kernel | $(uname -sr) |
| load average (1, 5, 15 min) | $LOAD_BEFORE at the start, $LOAD_AFTER at the end (the benchmark's own load included; other work on the machine is not stopped) |
| PostgreSQL | $PG_VERSION |
| syncwf | $SYNCWF_VERSION, built from commit $COMMIT |
| cluster | shared_buffers = 256MB, max_connections = 50, fsync = on, synchronous_commit = on, $CLUSTER_SYNCWF; unix socket, pgbench on the same machine |
| pgbench | \`$PGBENCH_CMD\`, $BENCH_ROUNDS rounds per contender (comparisons 1, 2, 5, 8), warm-up ${BENCH_WARMUP} s per contender |
| pgbench, mixed (comparison 10) | \`pgbench -n -M prepared -c $(nproc) -j $(nproc) -T $BENCH_SECONDS -l -f <script>@1 ...\` (one client per CPU, a script picked at random per transaction), $BENCH_ROUNDS rounds, warm-up ${BENCH_WARMUP} s |
| tps | pgbench's "tps ... without initial connection time" |

## Results

| comparison | figure | value | target | verdict |
| --- | --- | --- | --- | --- |
$(printf '%s\n' "${SUMMARY[@]}")

### Throughput per round (tps)

Spread is the fastest round over the slowest round of the same contender: how
much the machine's own noise moved the figures during this run. Comparison
10's rows are mean latencies in microseconds instead, and their last column
the contender's cost over \`plain\`'s in each round.

| comparison | contender | rounds in run order | median | spread (max / min) |
| --- | --- | --- | --- | --- |
$(printf '%s\n' "${ROUND_ROWS[@]}")
EOF
        for c in $REPORT_DETAILS; do
            if declare -F "cmp${c}_details" >/dev/null; then "cmp${c}_details"; fi
        done
    } >"$BENCH_OUT.tmp"
    mv "$BENCH_OUT.tmp" "$BENCH_OUT"
}
