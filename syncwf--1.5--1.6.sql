/* syncwf--1.5--1.6.sql: update the syncwf extension from version 1.5 to 1.6 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.6'" to load this file. \quit

-- Each change below is also in syncwf--1.6.sql, which installs 1.6 from
-- scratch; test/t/012_upgrade.pl checks that both give the same objects.

-- How each semaphore's queue grants: NULL in every existing row, which is
-- 'strict', today's order; a nullable column without a default rewrites
-- nothing, and the trigger sync_limit_changed does not fire.
ALTER TABLE sync_limit ADD COLUMN queueing text
    CONSTRAINT sync_limit_queueing_check CHECK (queueing IN ('strict', 'best_effort'));
COMMENT ON COLUMN sync_limit.queueing IS
    '''strict'' (NULL: the same): grants in queue order; ''best_effort'': a waiter that fits may pass one that cannot be granted yet, at most syncwf.max_passes times each';
