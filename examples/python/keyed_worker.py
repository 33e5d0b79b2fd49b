#!/usr/bin/python3
"""Run a long job under a syncwf keyed hold with a lease.

A keyed hold belongs to a holder key (here a job id), not to a connection:
it outlives this program's connection, and even a server restart. The lease
bounds how long it outlives the program itself: unless the program refreshes
it, the server releases the hold when the lease runs out.

The worker
  1. requests the lock for its holder key (sync_request never waits);
  2. waits for the grant with sync_wait, in slices, heartbeating its
     controller between them;
  3. works in steps, refreshing the lease every third of it and checking
     before each step, with the fencing token, that the grant is its own;
  4. releases the hold.
When the connection drops, it connects again, checks that the hold is still
its own, and carries on; a request still pending keeps its place meanwhile.

    DATABASE_URL=postgresql://app@db.example.com/app \\
        /usr/bin/python3 keyed_worker.py --holder billing/export-42

Without DATABASE_URL, libpq's PGHOST, PGPORT, PGUSER, PGDATABASE, ... apply;
the database must be the one syncwf.database names. Exit status: 0 when the
job ran and released the hold, 1 when the hold was lost or withdrawn.
"""

import argparse
import os
import socket
import sys
import time
from datetime import timedelta

import psycopg
from psycopg import errors

APPLICATION_NAME = "syncwf-example-keyed"


def log(message):
    print(message, flush=True)


class ConnectionLost(Exception):
    """The connection dropped; the statement may or may not have run."""


class Database:
    """One autocommit connection, made again after it drops."""

    def __init__(self, conninfo, give_up_after):
        self.conninfo = conninfo
        self.give_up_after = give_up_after     # seconds of failed attempts
        self.conn = None

    def connect(self):
        deadline = time.monotonic() + self.give_up_after
        delay = 0.1
        while True:
            try:
                # autocommit: every statement is its own transaction, as
                # syncwf's keyed functions expect (a request or a release
                # takes effect when its transaction commits).
                # prepare_threshold=None: no server-side prepared
                # statements, so that the worker also runs through a
                # transaction pooler (PgBouncer before 1.21 cannot follow
                # them from one server connection to the next).
                self.conn = psycopg.connect(self.conninfo, autocommit=True,
                                            prepare_threshold=None,
                                            application_name=APPLICATION_NAME)
                return
            except psycopg.OperationalError as e:
                if time.monotonic() + delay > deadline:
                    raise
                log(f"cannot connect ({first_line(e)}); retrying in {delay:g} s")
                time.sleep(delay)
                delay = min(delay * 2, 5.0)

    def reconnect(self, error):
        log(f"connection lost ({first_line(error)}); reconnecting")
        if self.conn is not None:
            self.conn.close()
        self.connect()

    def row(self, sql, params=()):
        """The one row a statement returns; ConnectionLost if it dropped."""
        try:
            return self.conn.execute(sql, params).fetchone()
        except psycopg.OperationalError as e:
            # 55P03 is an OperationalError too, but an answer of the
            # server: only a closed connection means it dropped.
            if not self.conn.closed:
                raise
            raise ConnectionLost(e) from e

    def one(self, sql, params=()):
        """The first column of the one row a statement returns."""
        return self.row(sql, params)[0]


def describe(position):
    if position is None:
        return "passed over while its controller is inactive"
    return f"queue position {position}"


def first_line(error):
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


class Lost(Exception):
    """The hold (or the pending request) is no longer ours."""


def wait_for_grant(db, a):
    """Request the lock and wait until it is held; return the fencing token."""
    while True:
        try:
            # Asking again for the same lock and holder is harmless: it
            # reports the current state of the request (held with its token,
            # or pending) and changes nothing. So after a reconnect, or when
            # in doubt, simply ask again.
            status, token, position = db.row(
                "SELECT status, token, queue_position"
                "  FROM sync_request(%s, %s, controller => %s, lease => %s)",
                (a.lock, a.holder, a.controller, timedelta(seconds=a.lease)))
            if status == "held":
                return token
            log(f"pending: {a.lock} for {a.holder} ({describe(position)})")
            while True:
                try:
                    # Sleeps until a slot reaches the request, then returns
                    # the token of the grant (written to sync_state by
                    # then). SQLSTATE 55P03 when the slice ends first: the
                    # request stays queued.
                    return db.one("SELECT sync_wait(%s, %s, %s)",
                                  (a.lock, a.holder, timedelta(seconds=a.wait_slice)))
                except errors.LockNotAvailable:
                    # Still pending. A controller that stops heartbeating
                    # (syncwf.inactive_controller_timeout, 300 s by default)
                    # has its pending requests passed over.
                    db.one("SELECT sync_heartbeat(%s)", (a.controller,))
        except ConnectionLost as e:
            # The request outlived the connection, and kept its place in
            # the queue; asking again reports it.
            db.reconnect(e)
        except psycopg.Error as e:
            # SW002: no request to wait for; someone withdrew it
            # (sync_force_release, sync_forget_controller, a DELETE).
            if e.sqlstate == "SW002":
                raise Lost(first_line(e)) from e
            raise


def work(db, a, token):
    """Run the job's steps while the hold is ours; raise Lost otherwise."""
    refresh_every = a.lease / 3
    refreshed = time.monotonic()   # the lease started at the grant, just now
    reconnected = False
    step = 1
    while step <= a.steps:
        try:
            if time.monotonic() - refreshed >= refresh_every:
                # Pushes the expiry to now + the lease. SQLSTATE SW001:
                # the hold is gone (lease expired, released by an
                # administrator, ...), someone else may have the slot.
                db.one("SELECT sync_refresh(%s, %s)", (a.lock, a.holder))
                refreshed = time.monotonic()
            # Fencing: is the grant that carries this token still ours?
            # (a later grant to the same holder has another token)
            if not db.one("SELECT sync_is_held(%s, %s, %s)",
                          (a.lock, a.holder, token)):
                raise Lost(f"{a.lock} is no longer held by {a.holder} with token {token}")
            if reconnected:
                log(f"reconnected: {a.lock} is still held by {a.holder} with token {token}")
                reconnected = False
        except ConnectionLost as e:
            # The hold outlived the connection. Connect again, then refresh
            # at once (time passed while away) and check the hold again.
            db.reconnect(e)
            reconnected = True
            refreshed = 0.0
            continue
        except psycopg.Error as e:
            if e.sqlstate == "SW001":
                raise Lost(first_line(e)) from e
            raise

        # The step itself. Pass the token to every system the step changes,
        # so that it can refuse a writer whose token is older than the
        # newest it has seen (a worker that was paused past its lease).
        time.sleep(a.step_seconds)
        log(f"step {step}/{a.steps} done with token {token}")
        step += 1


def release(db, a):
    while True:
        try:
            if db.one("SELECT sync_release(%s, %s)", (a.lock, a.holder)):
                log(f"released: {a.lock} by {a.holder}")
            else:
                log(f"released: {a.lock} was no longer held by {a.holder}")
            return
        except ConnectionLost as e:
            db.reconnect(e)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", default="mtx/examples/report")
    parser.add_argument("--holder", default="examples/job-1",
                        help="the holder key: the job this hold is for")
    parser.add_argument("--controller", default=f"examples/{socket.gethostname()}",
                        help="the process acting for the holder")
    parser.add_argument("--lease", type=float, default=30.0,
                        help="seconds the hold outlives a silent worker (default 30)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--step-seconds", type=float, default=1.0)
    parser.add_argument("--wait-slice", type=float, default=30.0,
                        help="seconds of each sync_wait between heartbeats (default 30)")
    a = parser.parse_args()

    # Give up reconnecting after one lease: by then the hold is gone anyway.
    db = Database(os.environ.get("DATABASE_URL", ""), give_up_after=a.lease)
    db.connect()
    try:
        token = wait_for_grant(db, a)
        log(f"granted: {a.lock} to {a.holder} with token {token}")
        work(db, a, token)
    except Lost as e:
        log(f"lost: {e}; stopping")
        return 1
    except BaseException:
        # A failed or interrupted job frees the lock at once (or withdraws
        # its request) rather than when the lease runs out.
        release(db, a)
        raise
    release(db, a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
