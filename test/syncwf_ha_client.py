#!/usr/bin/python3
"""A syncwf client for test/t/033_patroni_failover.pl (not an example).

Runs one kind of hold in a loop against whichever server of a Patroni
cluster is the primary, through a multi-host libpq connection string with
target_session_attrs=read-write, and reconnects on its own when the
connection drops (a failover, a switchover, a fenced server):

  keyed    sync_request / sync_wait / sync_is_held / sync_release with a
           new holder key per round and a controller that heartbeats
  session  sync_acquire / sync_release
  xact     BEGIN; sync_acquire_xact; INSERT; COMMIT
  launch   sync_execution_create / polling the phase while PENDING /
           RUNNING / SUCCEEDED (a launch-plan slot)

It writes one JSON line per observed event to --log, with the wall-clock
time t (seconds since the epoch, the test's clock too), the server's port
and timeline of the connection, and for grants the fencing token and the
time the request that led to it was first sent (sent):

  connect       a connection (port, tl: the primary's timeline)
  conn_error    a connection dropped or could not be made (once per outage)
  request       sync_request / sync_execution_create committed (status)
  grant         a grant seen: its token (and lock, holder); once per grant
  verify        a hold checked on the server: ok true/false (after a
                reconnect: after = true)
  lost          a grant this client had seen is gone
  release_send  the client stops using the hold and sends its release
  release       the release committed
  error         a server error other than a dropped connection (sqlstate)

psycopg2 (Patroni's own dependency, python3-psycopg2) is used, so the test
needs nothing Patroni does not. It stops at the end of a round once the
file --stop exists.
"""

import argparse
import json
import os
import random
import sys
import time

import psycopg2
import psycopg2.errors


class Lost(Exception):
    """The connection dropped; the statement may or may not have run."""


class Gone(Exception):
    """An execution left its waiting phase without a slot."""


class Client:
    def __init__(self, a):
        self.a = a
        self.conn = None
        self.port = None
        self.tl = None
        self.out = open(a.log, "a", buffering=1)
        self.outage = False

    def log(self, ev, **kw):
        rec = {"t": round(time.time(), 6), "id": self.a.id, "kind": self.a.kind,
               "ev": ev, "port": self.port, "tl": self.tl}
        rec.update(kw)
        self.out.write(json.dumps(rec) + "\n")

    def stopping(self):
        return os.path.exists(self.a.stop)

    def connect(self):
        delay = 0.05
        while True:
            try:
                c = psycopg2.connect(self.a.dsn, connect_timeout=3,
                                     application_name="syncwf-ha-" + self.a.id)
                c.autocommit = True
                cur = c.cursor()
                # the primary's timeline: the first 8 hex digits of the name
                # of its current WAL file
                cur.execute("SELECT inet_server_port(), pg_is_in_recovery(),"
                            " ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))"
                            "::bit(32)::int")
                port, rec, tl = cur.fetchone()
                if rec:
                    c.close()
                    raise psycopg2.OperationalError("connected to a standby")
                self.conn, self.port, self.tl = c, port, tl
                self.outage = False
                self.log("connect")
                return
            except psycopg2.Error as e:
                self.conn_error(e)
                if self.stopping():
                    sys.exit(0)
                time.sleep(delay)
                delay = min(delay * 2, 0.2)

    def conn_error(self, e):
        if not self.outage:
            self.log("conn_error", msg=first_line(e))
        self.outage = True
        self.port = self.tl = None
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
        self.conn = None

    def q(self, sql, params=()):
        """Run one statement; its rows. Lost if the connection dropped."""
        if self.conn is None:
            self.connect()
        try:
            cur = self.conn.cursor()
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []
        except psycopg2.Error as e:
            if self.conn.closed or isinstance(e, (psycopg2.OperationalError,
                                                  psycopg2.InterfaceError)) \
                    and e.pgcode is None:
                self.conn_error(e)
                raise Lost() from e
            raise

    def err(self, e):
        self.log("error", sqlstate=e.pgcode, msg=first_line(e))
        # start afresh: a failed transaction block is rolled back with it
        self.conn_error(e)
        self.outage = False

    def pause(self, lo, hi):
        time.sleep(random.uniform(lo, hi))


def first_line(e):
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__


# --- keyed holds ------------------------------------------------------------
def run_keyed(c, a):
    n = 0
    last_beat = 0.0
    while not c.stopping():
        n += 1
        holder = f"{a.id}/{n}"
        sent = None
        token = None        # the grant seen
        released = False    # release sent
        done = False
        after = False       # a reconnect happened while we held
        while not done:
            try:
                if time.time() - last_beat > 2:
                    c.q("SELECT sync_heartbeat(%s)", (a.id,))
                    last_beat = time.time()
                if token is None:
                    if sent is None:
                        sent = time.time()
                    status, tok = c.q("SELECT status, token FROM sync_request(%s, %s,"
                                      " controller => %s)", (a.lock, holder, a.id))[0]
                    c.log("request", lock=a.lock, holder=holder, status=status)
                    while status != "held":
                        try:
                            tok = c.q("SELECT sync_wait(%s, %s, interval '2 s')",
                                      (a.lock, holder))[0][0]
                            status = "held"
                        except psycopg2.errors.LockNotAvailable:
                            c.q("SELECT sync_heartbeat(%s)", (a.id,))
                            last_beat = time.time()
                    token = tok
                    c.log("grant", lock=a.lock, holder=holder, token=token, sent=sent)
                    c.pause(a.hold_min, a.hold_max)
                if not released:
                    ok = c.q("SELECT sync_is_held(%s, %s, %s)", (a.lock, holder, token))[0][0]
                    c.log("verify", lock=a.lock, holder=holder, token=token, ok=ok, after=after)
                    if not ok:
                        c.log("lost", lock=a.lock, holder=holder, token=token)
                    c.log("release_send", lock=a.lock, holder=holder, token=token)
                    released = True
                r = c.q("SELECT sync_release(%s, %s)", (a.lock, holder))[0][0]
                c.log("release", lock=a.lock, holder=holder, token=token, found=r)
                done = True
            except Lost:
                if token is not None and not released:
                    after = True
            except psycopg2.Error as e:
                c.err(e)
                if token is not None and not released:
                    after = True
        c.pause(a.gap_min, a.gap_max)


# --- session and transaction holds ------------------------------------------
def run_session(c, a):
    while not c.stopping():
        try:
            sent = time.time()
            try:
                token = c.q("SELECT sync_acquire(%s, timeout => interval '2 s')", (a.lock,))[0][0]
            except psycopg2.errors.LockNotAvailable:
                continue
            c.log("grant", lock=a.lock, token=token, sent=sent)
            c.pause(a.hold_min, a.hold_max)
            c.log("release_send", lock=a.lock, token=token)
            r = c.q("SELECT sync_release(%s)", (a.lock,))[0][0]
            c.log("release", lock=a.lock, token=token, found=r)
        except Lost:
            pass          # a session hold ends with its session
        except psycopg2.Error as e:
            c.err(e)
        c.pause(a.gap_min, a.gap_max)


def run_xact(c, a):
    while not c.stopping():
        try:
            c.q("BEGIN")
            sent = time.time()
            try:
                token = c.q("SELECT sync_acquire_xact(%s, timeout => interval '2 s')",
                            (a.lock,))[0][0]
            except psycopg2.errors.LockNotAvailable:
                c.q("ROLLBACK")
                continue
            c.log("grant", lock=a.lock, token=token, sent=sent)
            c.pause(a.hold_min, a.hold_max)
            c.q("INSERT INTO ha_xact_log (client, token) VALUES (%s, %s)", (a.id, token))
            c.log("release_send", lock=a.lock, token=token)
            c.q("COMMIT")
            c.log("release", lock=a.lock, token=token)
        except Lost:
            pass
        except psycopg2.Error as e:
            c.err(e)
        c.pause(a.gap_min, a.gap_max)


# --- launch-plan executions --------------------------------------------------
PLAN = ("ha", "prod", "deploy", "v1")
PLAN_LOCK = "sem/launchplan/ha/prod/deploy"
ACTIVE = ("QUEUED", "RUNNING", "SUCCEEDING", "FAILING", "ABORTING")


def slot(c, eid):
    """(phase, token of its held slot) of an execution."""
    rows = c.q("SELECT e.phase, s.token FROM sync_execution e"
               " LEFT JOIN sync_state s ON s.name = %s AND s.workflowkey = e.execution_id"
               "  AND s.held WHERE e.execution_id = %s", (PLAN_LOCK, eid))
    return rows[0] if rows else (None, None)


def run_launch(c, a):
    n = 0
    while not c.stopping():
        n += 1
        eid = f"{a.id}-{n}"
        sent = None
        token = None
        released = False
        done = False
        after = False
        while not done:
            try:
                if token is None:
                    if sent is None:
                        sent = time.time()
                    phase = c.q("SELECT phase FROM sync_execution_create(%s, %s, %s, %s, %s)",
                                PLAN + (eid,))[0][0]
                    c.log("request", lock=PLAN_LOCK, holder=eid, status=phase)
                    while True:
                        phase, tok = slot(c, eid)
                        if phase in ACTIVE and tok is not None:
                            break
                        if phase != "PENDING":
                            # not for a client to fix: say so, launch anew
                            raise Gone(f"execution {eid} is {phase} before its grant was seen")
                        time.sleep(0.05)
                    token = tok
                    c.log("grant", lock=PLAN_LOCK, holder=eid, token=token, sent=sent)
                    c.q("SELECT sync_execution_update(%s, 'RUNNING')", (eid,))
                    c.pause(a.hold_min, a.hold_max)
                if not released:
                    phase, tok = slot(c, eid)
                    ok = phase in ACTIVE and tok == token and \
                        c.q("SELECT sync_is_held(%s, %s, %s)", (PLAN_LOCK, eid, token))[0][0]
                    c.log("verify", lock=PLAN_LOCK, holder=eid, token=token, ok=ok,
                          after=after, phase=phase)
                    if not ok:
                        c.log("lost", lock=PLAN_LOCK, holder=eid, token=token)
                    c.log("release_send", lock=PLAN_LOCK, holder=eid, token=token)
                    released = True
                phase = c.q("SELECT sync_execution_update(%s, 'SUCCEEDED')", (eid,))[0][0]
                c.log("release", lock=PLAN_LOCK, holder=eid, token=token, phase=phase)
                done = True
            except Lost:
                if token is not None and not released:
                    after = True
            except Gone as e:
                c.log("error", sqlstate=None, msg=str(e))
                done = True
            except psycopg2.Error as e:
                c.err(e)
                if token is not None and not released:
                    after = True
        c.pause(a.gap_min, a.gap_max)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kind", required=True, choices=["keyed", "session", "xact", "launch"])
    p.add_argument("--id", required=True)
    p.add_argument("--dsn", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--stop", required=True)
    p.add_argument("--lock", default="")
    p.add_argument("--hold-min", type=float, default=0.05)
    p.add_argument("--hold-max", type=float, default=0.25)
    p.add_argument("--gap-min", type=float, default=0.02)
    p.add_argument("--gap-max", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    random.seed(a.seed)
    c = Client(a)
    c.connect()
    {"keyed": run_keyed, "session": run_session, "xact": run_xact,
     "launch": run_launch}[a.kind](c, a)
    c.log("exit")


if __name__ == "__main__":
    main()
