#!/usr/bin/python3
"""Run a job under a syncwf session hold, waiting at most a few seconds.

A session hold belongs to this connection: it ends when the job releases it
or when the connection ends, however that happens. That suits work that
runs while the program stays connected. For work that must survive a
dropped connection, use a keyed hold (keyed_worker.py).

    DATABASE_URL=postgresql://app@db.example.com/app \\
        /usr/bin/python3 session_hold.py --lock mtx/billing/nightly-export

Without DATABASE_URL, libpq's PGHOST, PGPORT, PGUSER, PGDATABASE, ... apply.
Exit status: 0 when the job ran, 75 (EX_TEMPFAIL) when the lock stayed busy,
1 when the connection dropped during the job.
"""

import argparse
import os
import sys
import time
from datetime import timedelta

import psycopg
from psycopg import errors

EX_TEMPFAIL = 75


def log(message):
    print(message, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", default="mtx/examples/nightly-export")
    parser.add_argument("--timeout", type=float, default=5.0,
                        help="seconds to wait for the lock (default 5)")
    parser.add_argument("--try", dest="no_wait", action="store_true",
                        help="do not wait at all (sync_try_acquire)")
    parser.add_argument("--work", type=float, default=2.0,
                        help="seconds the job takes (default 2)")
    args = parser.parse_args()

    # autocommit: each statement is its own transaction. A session hold
    # does not care, but it keeps the session out of "idle in transaction"
    # while the job runs.
    with psycopg.connect(os.environ.get("DATABASE_URL", ""), autocommit=True,
                         application_name="syncwf-example-session") as conn:
        if args.no_wait:
            # Never waits, never queues: NULL unless the lock is free and
            # nobody is waiting for it.
            token = conn.execute("SELECT sync_try_acquire(%s)",
                                 (args.lock,)).fetchone()[0]
            if token is None:
                log(f"busy: {args.lock} is taken; try again later")
                return EX_TEMPFAIL
        else:
            try:
                # Queues behind the current holders and sleeps until
                # granted; after the timeout the request leaves the queue
                # and the call fails with SQLSTATE 55P03.
                token = conn.execute(
                    "SELECT sync_acquire(%s, timeout => %s)",
                    (args.lock, timedelta(seconds=args.timeout))).fetchone()[0]
            except errors.LockNotAvailable:          # SQLSTATE 55P03
                log(f"busy: {args.lock} not granted within {args.timeout:g} s;"
                    " try again later")
                return EX_TEMPFAIL

        # The fencing token is a bigint; Python's int holds it exactly. Pass
        # it to whatever the job changes, so that it can refuse a writer
        # whose token is older than the newest it has seen.
        log(f"acquired: {args.lock} with token {token}")
        time.sleep(args.work)                        # the job
        log(f"job done with token {token}")
        try:
            # Closing the connection would release it too; releasing says
            # so, and frees the lock at once for the next waiter.
            conn.execute("SELECT sync_release(%s)", (args.lock,))
        except psycopg.OperationalError as e:
            if not conn.closed:
                raise
            # The connection dropped during the job, and the hold with it:
            # someone else may have had the lock meanwhile.
            # (libpq's message may span lines: keep the log line whole)
            why = " ".join(str(e).split())
            log(f"lost: the connection dropped ({why}), and the hold with it")
            return 1
        log(f"released: {args.lock}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
