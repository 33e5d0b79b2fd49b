-- Tables and functions of the plain-SQL contenders of comparisons 5 and 7
-- (scripts/bench.sh loads this file into the bench database).

-- Comparison 5, reference contender: a semaphore kept in a table.  A row is
-- a hold of semaphore 'name' by 'holder'; the limits are in their own table
-- (the same names and limits as syncwf's sync_limit rows 'bench/k<n>').
-- See bench/table_semaphore.sql for the request and the release.
CREATE TABLE bench_sem_limit (
    name      text PRIMARY KEY,   -- 'sem/bench/k<n>'
    sizelimit integer NOT NULL
);

CREATE TABLE bench_sem (
    name   text NOT NULL,
    holder text NOT NULL,
    PRIMARY KEY (name, holder)
);

-- Comparison 7, reference contender: the best a plain-SQL queue can do for
-- a hand-off: the releasing transaction deletes its hold, grants the first
-- pending row and sends the NOTIFY itself, all in one commit.
CREATE TABLE bench_ho (
    name   text    NOT NULL,
    holder text    NOT NULL,
    held   boolean NOT NULL,
    seq    bigserial,
    PRIMARY KEY (name, holder)
);

-- Request: held if nobody holds the (mutex) lock, else pending.
CREATE FUNCTION bench_ho_request(p_name text, p_holder text)
RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    is_held boolean;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext(p_name));
    is_held := NOT EXISTS (SELECT 1 FROM bench_ho WHERE name = p_name AND held);
    INSERT INTO bench_ho (name, holder, held) VALUES (p_name, p_holder, is_held);
    RETURN CASE WHEN is_held THEN 'held' ELSE 'pending' END;
END
$$;

-- Release: delete the hold, grant the oldest pending row and announce it on
-- channel bench_ho with the same JSON as syncwf's "granted" event.
CREATE FUNCTION bench_ho_release(p_name text, p_holder text)
RETURNS boolean
LANGUAGE plpgsql
AS $$
DECLARE
    nxt text;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext(p_name));
    DELETE FROM bench_ho WHERE name = p_name AND holder = p_holder;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE bench_ho SET held = true
     WHERE (name, holder) = (SELECT name, holder FROM bench_ho
                              WHERE name = p_name AND NOT held
                              ORDER BY seq LIMIT 1)
    RETURNING holder INTO nxt;
    IF nxt IS NOT NULL THEN
        PERFORM pg_notify('bench_ho',
                          json_build_object('event', 'granted', 'lock', p_name,
                                            'holder', nxt, 'token', NULL,
                                            'controller', NULL)::text);
    END IF;
    RETURN true;
END
$$;
