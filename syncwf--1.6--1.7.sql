/* syncwf--1.6--1.7.sql: update the syncwf extension from version 1.6 to 1.7 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.7'" to load this file. \quit

-- Each change below is also in syncwf--1.7.sql, which installs 1.7 from
-- scratch; test/t/012_upgrade.pl checks that both give the same objects.

-- syncwf's shared memory, which grows with use up to syncwf.max_memory
-- (src/core/shared_pool.c): what it has taken, what is in use, and the
-- locks, entries and holder keys in it.
CREATE FUNCTION sync_memory_status(OUT allocated_bytes bigint,
                                   OUT used_bytes bigint,
                                   OUT max_bytes bigint,
                                   OUT locks bigint, OUT cached_locks bigint,
                                   OUT entries bigint, OUT holders bigint,
                                   OUT lock_slots bigint,
                                   OUT entry_slots bigint,
                                   OUT holder_slots bigint,
                                   OUT grows_refused bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'sync_memory_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW sync_memory AS
    SELECT allocated_bytes, used_bytes, max_bytes,
           round(100.0 * allocated_bytes / max_bytes, 1) AS pct_of_max,
           locks, cached_locks, entries, holders,
           lock_slots, entry_slots, holder_slots, grows_refused
      FROM sync_memory_status();
COMMENT ON VIEW sync_memory IS
    'syncwf''s shared memory, over all databases: bytes taken, in use and allowed (syncwf.max_memory), and the locks, entries and holder keys in it';
GRANT SELECT ON sync_memory TO PUBLIC;
