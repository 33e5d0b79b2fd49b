/* syncwf--1.1--1.2.sql: update the syncwf extension from version 1.1 to 1.2 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.2'" to load this file. \quit

-- Each change below is also in syncwf--1.2.sql, which installs 1.2 from
-- scratch; test/t/012_upgrade.pl checks that both give the same objects.
