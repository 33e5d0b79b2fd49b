-- Workload 3: release -> waiter-running latency.
--
-- Two sessions call bench_pingpong() at the same time on the same lock.  Each
-- iteration: acquire; stamp t_run right after the acquire returns; keep it;
-- wait until the other session is asleep waiting for the lock; stamp t_rel;
-- keep it; release.  Both locks under test grant the lock to the queued
-- waiter at release, so every release is a hand-off to a sleeping waiter, and
-- the sessions strictly alternate: A1 B1 A2 B2 ... An Bn.
-- Waiting for the peer happens while holding, outside the
-- measured interval t_rel -> t_run; without it, on a busy 2-CPU machine, a
-- descheduled peer is often not back in its acquire when the holder releases,
-- and the holder simply re-takes the free lock (no hand-off at all).
--
-- Session A (first = true) waits for B before every release; B waits for A
-- before every release but its last (A has finished by then).  The stamps
-- live in plpgsql arrays during the loop (no table writes, no commits inside
-- the loop) and are inserted once at the end, so they become visible when
-- each session's single transaction commits, and nothing but the lock couples
-- the two sessions while they run.

CREATE UNLOGGED TABLE IF NOT EXISTS bench_stamps (
    run   text        NOT NULL,   -- 'syncwf' or 'advisory'
    who   text        NOT NULL,   -- 'A' or 'B'
    seq   integer     NOT NULL,   -- iteration number within the session
    t_run timestamptz NOT NULL,   -- right after the acquire returned
    t_rel timestamptz NOT NULL    -- right before the release was called
);

-- Is the peer session (application_name bench_pp_<peer>) asleep waiting
-- for the lock?  Read from pg_stat_activity (about 20 us, the same for both
-- locks) rather than from sync_waiters / pg_locks, which cost far more per
-- call (sync_waiters scans all of syncwf's entry slots) and would differ
-- between the contenders.  The backend status snapshot is cached for the
-- transaction, hence pg_stat_clear_snapshot().
CREATE OR REPLACE FUNCTION bench_peer_waiting(kind text, peer text)
RETURNS boolean
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_stat_clear_snapshot();
    RETURN EXISTS (SELECT 1 FROM pg_stat_activity a
                    WHERE a.application_name = 'bench_pp_' || peer
                      AND CASE WHEN kind = 'syncwf'
                               THEN a.wait_event_type = 'Extension'
                               ELSE a.wait_event_type = 'Lock' AND a.wait_event = 'advisory'
                          END);
END
$$;

CREATE OR REPLACE FUNCTION bench_pingpong(run text, who text, kind text,
                                          lockname text, lockkey bigint,
                                          iterations integer, first boolean)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    runs     timestamptz[] := '{}';
    rels     timestamptz[] := '{}';
    t_run    timestamptz;
    t_rel    timestamptz;
    deadline timestamptz;
    polls    integer;
BEGIN
    FOR i IN 1 .. iterations LOOP
        IF kind = 'syncwf' THEN
            PERFORM sync_acquire(lockname);
        ELSE
            PERFORM pg_advisory_lock(lockkey);
        END IF;
        t_run := clock_timestamp();
        runs := runs || t_run;

        IF first OR i < iterations THEN
            -- poll without sleeping for a while (the peer normally queues
            -- within microseconds), then every millisecond
            polls := 0;
            deadline := clock_timestamp() + interval '60 seconds';
            WHILE NOT bench_peer_waiting(kind, CASE who WHEN 'A' THEN 'B' ELSE 'A' END) LOOP
                polls := polls + 1;
                IF polls > 200 THEN
                    IF clock_timestamp() > deadline THEN
                        RAISE EXCEPTION 'bench_pingpong %: session % iteration %: peer not waiting for % for 60 s',
                            run, who, i, lockname;
                    END IF;
                    PERFORM pg_sleep(0.001);
                END IF;
            END LOOP;
        END IF;

        t_rel := clock_timestamp();
        rels := rels || t_rel;
        IF kind = 'syncwf' THEN
            PERFORM sync_release(lockname);
        ELSE
            PERFORM pg_advisory_unlock(lockkey);
        END IF;
    END LOOP;

    INSERT INTO bench_stamps (run, who, seq, t_run, t_rel)
    SELECT run, who, u.seq::integer, u.r, u.l
      FROM unnest(runs, rels) WITH ORDINALITY AS u(r, l, seq);
    RETURN iterations;
END
$$;

-- Hand-offs of one run: every wake-up (t_run) of one session whose
-- immediately preceding event, in time order over both sessions, is a release
-- (t_rel) by the other session.  With the peer check above that is every
-- acquire but A's first; anything else (an acquire preceded by the session's
-- own release) would not be a hand-off and is not counted.
CREATE OR REPLACE FUNCTION bench_handoffs(p_run text)
RETURNS TABLE (who text, seq integer, latency_us double precision)
LANGUAGE sql STABLE
AS $$
    WITH ev AS (
        SELECT s.who, s.seq, 0 AS ord, 'run' AS ev, s.t_run AS t
          FROM bench_stamps s WHERE s.run = p_run
        UNION ALL
        SELECT s.who, s.seq, 1, 'rel', s.t_rel
          FROM bench_stamps s WHERE s.run = p_run
    ), o AS (
        SELECT ev.*, lag(ev.who) OVER w AS p_who, lag(ev.ev) OVER w AS p_ev,
               lag(ev.t) OVER w AS p_t
          FROM ev
        WINDOW w AS (ORDER BY ev.t, ev.seq, ev.ord)
    )
    SELECT o.who, o.seq, extract(epoch FROM (o.t - o.p_t))::double precision * 1e6
      FROM o
     WHERE o.ev = 'run' AND o.p_ev = 'rel' AND o.p_who <> o.who
$$;
