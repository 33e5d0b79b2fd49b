/* syncwf--1.2--1.3.sql: update the syncwf extension from version 1.2 to 1.3 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.3'" to load this file. \quit

-- Each change below is also in the current full script (syncwf--1.6.sql);
-- test/t/012_upgrade.pl checks that 1.0 updated through this script and
-- the rest of the chain gives the same objects as that script.

-- Names as long as Argo's (varchar(256), docs/argo.md): a limit name of
-- 256 bytes (its lock, "sem/" and the name, 260), a controller of 256.
-- Every row of 1.2 is shorter, so the new checks hold for them.
ALTER TABLE sync_limit DROP CONSTRAINT sync_limit_name_check,
    ADD CONSTRAINT sync_limit_name_check
        CHECK (name ~ '^[^/[:cntrl:]]+/[^[:cntrl:]]+$' AND octet_length(name) <= 256);
ALTER TABLE sync_controller DROP CONSTRAINT sync_controller_name_check,
    ADD CONSTRAINT sync_controller_name_check
        CHECK (controller <> '' AND octet_length(controller) <= 256);
