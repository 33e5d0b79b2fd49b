-- Workload 5, reference contender: the same semaphores kept in a plain table
-- (bench/keyed_setup.sql): bench_sem(name, holder), limits in
-- bench_sem_limit.  The request is one transaction: serialize on the
-- semaphore with a transaction-level advisory lock, count its held rows
-- (against its limit) and insert a row when a slot is free; COMMIT.  The
-- release deletes the row (its own transaction).  Two commits per pgbench
-- transaction, like the syncwf contender.
\set n random(1, 1000)
\set h random(1, 1000000000)
BEGIN;
SELECT pg_advisory_xact_lock(hashtext('sem/bench/k' || :n));
SELECT (SELECT count(*) FROM bench_sem WHERE name = 'sem/bench/k' || :n)
     < (SELECT sizelimit FROM bench_sem_limit WHERE name = 'sem/bench/k' || :n) AS free \gset
\if :free
INSERT INTO bench_sem (name, holder) VALUES ('sem/bench/k' || :n, 'bench/c' || :client_id || '/' || :h);
\endif
COMMIT;
DELETE FROM bench_sem WHERE name = 'sem/bench/k' || :n AND holder = 'bench/c' || :client_id || '/' || :h;
