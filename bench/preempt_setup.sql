-- Comparison 18, preemption: urgent session requests that preempt
-- preemptible keyed holds.
--
-- Low clients (bench/syncwf_preempt_low.sql, one pgbench transaction per
-- hold) request sem/b18p/x with priority 0 and preemptible => true, wait
-- for the grant (sync_wait), then keep the hold until it is gone
-- (bench_preempt_hold(): they never release it themselves, so every
-- preemption lasts its whole grace), and ask again.  Urgent clients run
-- bench_preempt_urgent() once, as their only pgbench transaction: stamp
-- t_req; sync_acquire the semaphore with priority 5 (session scope,
-- waiting); stamp t_grant; hold it p_hold_ms; release; think 0 to
-- p_think_ms.  The stamps are kept in plpgsql arrays and inserted at the
-- end.

CREATE UNLOGGED TABLE IF NOT EXISTS bench_preempt (
    run     text        NOT NULL,  -- '18p-<round>'
    client  integer     NOT NULL,
    seq     integer     NOT NULL,
    t_req   timestamptz NOT NULL,  -- right before sync_acquire
    t_grant timestamptz NOT NULL   -- right after it returned
);

-- Keep the keyed hold (lock, holder, token) until it is no longer held
-- (preempted, its grace over), at most p_secs; returns how long, in ms.
-- If it outlives p_secs (the run is over) it is released.
CREATE OR REPLACE FUNCTION bench_preempt_hold(p_lock text, p_holder text, p_token bigint,
                                              p_secs float8)
RETURNS float8
LANGUAGE plpgsql
AS $$
DECLARE
    t0       timestamptz := clock_timestamp();
    deadline timestamptz := clock_timestamp() + p_secs * interval '1 s';
BEGIN
    WHILE sync_is_held(p_lock, p_holder, p_token) LOOP
        IF clock_timestamp() > deadline THEN
            PERFORM sync_release(p_lock, p_holder);
            EXIT;
        END IF;
        PERFORM pg_sleep(0.005);
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;

CREATE OR REPLACE FUNCTION bench_preempt_urgent(p_run text, p_client integer, p_secs float8,
                                                p_hold_ms integer, p_think_ms integer)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + p_secs * interval '1 s';
    reqs     timestamptz[] := '{}';
    grants   timestamptz[] := '{}';
BEGIN
    LOOP
        PERFORM pg_sleep(random() * p_think_ms / 1000.0);
        reqs := reqs || clock_timestamp();
        PERFORM sync_acquire('sem/b18p/x', priority => 5);
        grants := grants || clock_timestamp();
        PERFORM pg_sleep(p_hold_ms / 1000.0);
        PERFORM sync_release('sem/b18p/x');
        EXIT WHEN clock_timestamp() >= deadline;
    END LOOP;
    INSERT INTO bench_preempt
    SELECT p_run, p_client, u.seq, u.t0, u.t1
      FROM unnest(reqs, grants) WITH ORDINALITY AS u(t0, t1, seq);
    RETURN cardinality(reqs);
END
$$;
