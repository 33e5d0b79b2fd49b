-- Comparison 18: guaranteed shares under a full parent.
--
-- Every client runs bench_guarantee_client() once, as its only pgbench
-- transaction, for p_secs seconds.  Each iteration: stamp t_req; acquire
-- its child's semaphore (session scope, waiting); stamp t_grant right
-- after it returns, and read the grant's own time in shared memory
-- (sync_holders.since); hold it until p_hold_ms after t_grant
-- (pg_sleep); stamp t_rel; release; stamp t_done; then, unless its child
-- is busy (below), think for a random 0 to p_think_ms before the next
-- request.  The stamps are kept in plpgsql arrays during the loop and
-- inserted once at the end, so nothing but the semaphores couples the
-- clients while they run.
--
-- After each run, bench_guarantee_classify() tells which requests were
-- within their child's guarantee, from the grants' order: see there.

CREATE UNLOGGED TABLE IF NOT EXISTS bench_guarantee (
    run         text        NOT NULL,  -- '18-<mode>-<round>'
    client      integer     NOT NULL,  -- pgbench's client_id
    child       integer     NOT NULL,  -- 1..4: sem/b18/c<child>
    seq         integer     NOT NULL,  -- iteration within the client
    t_req       timestamptz NOT NULL,  -- right before sync_acquire
    t_grant     timestamptz NOT NULL,  -- right after it returned
    granted_at  timestamptz NOT NULL,  -- the grant in shared memory (sync_holders.since)
    t_rel       timestamptz NOT NULL,  -- right before sync_release
    t_done      timestamptz NOT NULL   -- right after it returned
);
CREATE INDEX IF NOT EXISTS bench_guarantee_grants ON bench_guarantee (run, child, granted_at);

-- Is the child busy now: are we in one of its two busy phases of four?
-- The phases are p_phase_ms long, counted from the epoch, so every client
-- agrees; children c and c + 1 (mod 4) are busy in phase c - 1 (mod 4).
CREATE OR REPLACE FUNCTION bench_guarantee_busy_at(p_child integer, p_phase_ms integer,
                                                   p_at timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT ((p_child - 1 - floor(extract(epoch FROM p_at) * 1000 / p_phase_ms)::bigint) % 4 + 4) % 4 < 2
$$;

CREATE OR REPLACE FUNCTION bench_guarantee_busy(p_child integer, p_phase_ms integer)
RETURNS boolean
LANGUAGE sql
AS $$
    SELECT bench_guarantee_busy_at(p_child, p_phase_ms, clock_timestamp())
$$;

CREATE OR REPLACE FUNCTION bench_guarantee_client(p_run text, p_client integer,
                                                  p_secs float8, p_hold_ms integer,
                                                  p_think_ms integer, p_phase_ms integer)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_child  integer := p_client % 4 + 1;
    v_lock   text := 'sem/b18/c' || (p_client % 4 + 1);
    deadline timestamptz := clock_timestamp() + p_secs * interval '1 s';
    reqs     timestamptz[] := '{}';
    grants   timestamptz[] := '{}';
    sinces   timestamptz[] := '{}';
    rels     timestamptz[] := '{}';
    dones    timestamptz[] := '{}';
    t1       timestamptz;
    ts       timestamptz;
BEGIN
    LOOP
        reqs := reqs || clock_timestamp();
        PERFORM sync_acquire(v_lock);
        t1 := clock_timestamp();
        grants := grants || t1;
        SELECT since INTO ts FROM sync_holders
         WHERE pid = pg_backend_pid() AND lock_name = v_lock;
        sinces := sinces || ts;
        -- the hold: until H after the acquire returned
        PERFORM pg_sleep(greatest(0, p_hold_ms / 1000.0 - extract(epoch FROM clock_timestamp() - t1)));
        rels := rels || clock_timestamp();
        PERFORM sync_release(v_lock);
        dones := dones || clock_timestamp();
        EXIT WHEN clock_timestamp() >= deadline;
        -- busy (no think time) in two phases of four
        IF NOT bench_guarantee_busy(v_child, p_phase_ms) THEN
            PERFORM pg_sleep(random() * p_think_ms / 1000.0);
        END IF;
    END LOOP;
    INSERT INTO bench_guarantee
    SELECT p_run, p_client, v_child, u.seq, u.t0, u.t1, u.ts, u.t2, u.t3
      FROM unnest(reqs, grants, sinces, rels, dones) WITH ORDINALITY AS u(t0, t1, ts, t2, t3, seq);
    RETURN cardinality(reqs);
END
$$;

-- The runs: each one's measured window, [w_start, w_end); the requests
-- made in the first BENCH_WARMUP seconds and after the window are left out.
CREATE UNLOGGED TABLE IF NOT EXISTS bench_guarantee_runs (
    run     text PRIMARY KEY,
    mode    text        NOT NULL,  -- 'guarantee' or 'control'
    round   integer     NOT NULL,
    w_start timestamptz NOT NULL,
    w_end   timestamptz NOT NULL,
    phase_ms integer    NOT NULL   -- p_phase_ms of its clients
);

-- The window's requests, classified (bench_guarantee_classify()).
CREATE UNLOGGED TABLE IF NOT EXISTS bench_guarantee_req (
    run         text    NOT NULL,
    mode        text    NOT NULL,
    round       integer NOT NULL,
    child       integer NOT NULL,
    wait_ms     float8  NOT NULL,  -- t_grant - t_req
    hold_ms     float8  NOT NULL,  -- t_rel - t_grant
    before_it   integer NOT NULL,  -- its child's requests held or queued ahead of it
    parent_held integer NOT NULL,  -- holds under the parent at the request
    within      boolean NOT NULL,  -- before_it + 1 <= the guarantee
    full_parent boolean NOT NULL,  -- parent_held = the parent's sizelimit
    passed_by   integer            -- within: borrowing grants while it waited
);

-- Classify the window's requests of run p_run, for a guarantee p_g and a
-- parent of p_parent slots; returns how many.
--
-- Within the guarantee.  Each child's queue is first come, first served
-- (one slot each, one priority), so the grants of a child come in the
-- order its requests joined the queue, and a request's grant time in
-- shared memory (granted_at) is exact.  The requests of its child "before
-- it" are those granted before it and still held at its request (their
-- stamp before sync_release after its t_req): they held a slot or were
-- ahead of it in the queue.  The request is within the guarantee when
-- before_it + 1 <= p_g: the guarantee covers it and every request ahead of
-- it.  (Reading sync_locks just before sync_acquire instead is not exact:
-- two clients of a child reading it at the same moment both see the same
-- queue, and the second to join is then counted as within the guarantee
-- though it is behind the first.)  A release between the request's stamp
-- and its entering the queue counts as still held, which can only move a
-- request from within to borrowing.
--
-- Full parent: at least p_parent holds granted before the request and not
-- yet at their release stamp (a lower bound).
--
-- Passed: grants to another child's request that borrowed (at least p_g
-- other holders of that child held at its grant: granted before it, and
-- before their stamp ahead of sync_release, so a hand-off within a release
-- does not count), from p_slack after the request's stamp (the way into
-- the queue: the call may wait for the partition that the granting
-- release holds) until its own grant.
CREATE OR REPLACE FUNCTION bench_guarantee_classify(p_run text, p_g integer, p_parent integer,
                                                    p_slack interval)
RETURNS integer
LANGUAGE sql
AS $$
    WITH grants AS MATERIALIZED (
        SELECT g.child, g.granted_at,
               (SELECT count(*) FROM bench_guarantee y
                 WHERE y.run = g.run AND y.child = g.child
                   AND y.granted_at > g.granted_at - interval '1 s'  -- (holds last H)
                   AND y.granted_at < g.granted_at AND y.t_rel > g.granted_at) AS others
          FROM bench_guarantee g
         WHERE g.run = p_run),
    r AS (
        SELECT g.*, w.mode, w.round,
               (SELECT count(*) FROM bench_guarantee y
                 WHERE y.run = g.run AND y.child = g.child
                   AND y.granted_at > g.t_req - interval '1 s'
                   AND y.granted_at < g.granted_at AND y.t_rel > g.t_req) AS before_it,
               (SELECT count(*) FROM bench_guarantee y
                 WHERE y.run = g.run
                   AND y.granted_at > g.t_req - interval '1 s'
                   AND y.granted_at < g.t_req AND y.t_rel > g.t_req) AS parent_held
          FROM bench_guarantee g
          JOIN bench_guarantee_runs w USING (run)
         WHERE g.run = p_run AND g.t_req >= w.w_start AND g.t_req < w.w_end),
    ins AS (
        INSERT INTO bench_guarantee_req
        SELECT r.run, r.mode, r.round, r.child,
               extract(epoch FROM r.t_grant - r.t_req) * 1000,
               extract(epoch FROM r.t_rel - r.t_grant) * 1000,
               r.before_it, r.parent_held, r.before_it + 1 <= p_g, r.parent_held >= p_parent,
               CASE WHEN r.before_it + 1 <= p_g THEN
                   (SELECT count(*) FROM grants z
                     WHERE z.child <> r.child AND z.others >= p_g
                       AND z.granted_at > r.t_req + p_slack AND z.granted_at < r.granted_at)
               END
          FROM r
        RETURNING 1)
    SELECT count(*)::integer FROM ins
$$;

-- Slot-seconds each child held within the windows, per run and role
-- (busy or not, at the grant: a hold lasts H, a phase 50 times longer):
-- each hold from its grant to the stamp before its release, clipped to
-- the window.
CREATE OR REPLACE VIEW bench_guarantee_slots AS
SELECT r.run, r.mode, r.round, g.child,
       bench_guarantee_busy_at(g.child, r.phase_ms, g.granted_at) AS busy,
       sum(greatest(0, extract(epoch FROM least(g.t_rel, r.w_end) - greatest(g.granted_at, r.w_start))))
           AS slot_secs,
       extract(epoch FROM r.w_end - r.w_start) AS window_secs
  FROM bench_guarantee g
  JOIN bench_guarantee_runs r USING (run)
 GROUP BY 1, 2, 3, 4, 5, r.w_start, r.w_end;
