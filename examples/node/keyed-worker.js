#!/usr/bin/env node
// Run a long job under a syncwf keyed hold with a lease.
//
// A keyed hold belongs to a holder key (here a job id), not to a connection:
// it outlives this program's connection, and even a server restart. The
// lease bounds how long it outlives the program itself: unless the program
// refreshes it, the server releases the hold when the lease runs out.
//
// The worker
//   1. listens on its controller's channel, then requests the lock for its
//      holder key (sync_request never waits);
//   2. while the request is pending, sleeps until a notification about it
//      arrives, asking again (and heartbeating its controller) every slice;
//   3. works in steps, refreshing the lease every third of it and checking
//      before each step, with the fencing token, that the grant is its own;
//   4. releases the hold.
// When the connection drops, it connects again, checks that the hold is
// still its own, and carries on; a request still pending keeps its place
// meanwhile.
//
//   DATABASE_URL=postgresql://app@db.example.com/app \
//     node keyed-worker.js --holder billing/export-42
//
// Without DATABASE_URL, node-postgres reads PGHOST, PGPORT, PGUSER,
// PGDATABASE and PGPASSWORD; the database must be the one syncwf.database
// names. Exit status: 0 when the job ran and released the hold, 1 when the
// hold was lost or the request withdrawn.
'use strict';

const { Client, DatabaseError } = require('pg');
const os = require('node:os');
const { parseArgs } = require('node:util');
const { setTimeout: sleep } = require('node:timers/promises');

const { values: opts } = parseArgs({
  options: {
    lock: { type: 'string', default: 'mtx/examples/report' },
    holder: { type: 'string', default: 'examples/job-1' }, // the job the hold is for
    controller: { type: 'string', default: `examples/${os.hostname()}` }, // who acts for it
    lease: { type: 'string', default: '30' }, // seconds the hold outlives a silent worker
    steps: { type: 'string', default: '10' },
    'step-seconds': { type: 'string', default: '1' },
    'wait-slice': { type: 'string', default: '30' }, // seconds between checks while pending
  },
});
const lock = opts.lock;
const holder = opts.holder;
const lease = Number(opts.lease);

class ConnectionLost extends Error {}
class Lost extends Error {}

// A connection that listens on the controller's channel and is made again
// after it drops. Notifications about our holder are queued in `events`.
class Database {
  constructor() {
    this.client = null;
    this.channel = null; // where our controller's events are announced
    this.broken = true; // no usable connection
    this.why = ''; // what broke it
    this.events = [];
    this.wake = null; // resolves the current waitForEvent()
  }

  async connect() {
    const deadline = Date.now() + lease * 1000; // by then the hold is gone anyway
    for (let delay = 100; ; delay = Math.min(delay * 2, 5000)) {
      const client = new Client({
        connectionString: process.env.DATABASE_URL, // undefined: PG* variables
        application_name: 'syncwf-example-keyed',
      });
      // Without an 'error' listener, a connection that drops while idle
      // would end the process.
      client.on('error', (err) => this.dropped(client, err.message));
      client.on('end', () => this.dropped(client, 'the server closed the connection'));
      client.on('notification', (msg) => this.notified(msg));
      try {
        await client.connect();
        // Every event of the entries that name our controller is sent on
        // its channel too (channel "syncwf" has every controller's). Listen
        // before (re)requesting, so that no grant is missed.
        const { rows } = await client.query('SELECT sync_channel($1) AS channel', [opts.controller]);
        this.channel = rows[0].channel;
        await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
        this.client = client;
        this.broken = false;
        return;
      } catch (err) {
        client.end().catch(() => {});
        if (Date.now() + delay > deadline) throw err;
        console.log(`cannot connect (${err.message}); retrying in ${delay / 1000} s`);
        await sleep(delay);
      }
    }
  }

  async reconnect(err) {
    console.log(`connection lost (${err.message}); reconnecting`);
    const old = this.client;
    this.client = null;
    this.broken = true;
    if (old) old.end().catch(() => {});
    await this.connect();
  }

  dropped(client, why) {
    if (client !== this.client || this.broken) return;
    this.broken = true;
    this.why = why;
    if (this.wake) this.wake();
  }

  notified(msg) {
    if (msg.channel !== this.channel) return;
    // {"event": "granted", "lock": ..., "holder": ..., "token": ..., ...}.
    // Tokens stay below 2^53, so JSON.parse reads them exactly; but a
    // notification sent while we were disconnected is lost for good, so
    // this worker uses them only as wake-ups and asks sync_request.
    const ev = JSON.parse(msg.payload);
    if (ev.lock !== lock || ev.holder !== holder) return; // another job's
    this.events.push(ev);
    if (this.wake) this.wake();
  }

  // Resolves at the next event about our holder, when the connection drops,
  // or after `ms`, whichever comes first.
  waitForEvent(ms) {
    if (this.events.length > 0 || this.broken) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake(), ms);
      this.wake = () => { clearTimeout(timer); this.wake = null; resolve(); };
    });
  }

  // One statement; ConnectionLost if the connection dropped.
  async query(sql, params) {
    if (this.broken) throw new ConnectionLost(this.why);
    try {
      return (await this.client.query(sql, params)).rows;
    } catch (err) {
      // An error the server sent is an answer (55P03, SW001, ...), except
      // those of a connection being shut down (57P01 and its kin) or
      // broken (class 08). Anything else means the socket is gone.
      if (err instanceof DatabaseError && !/^(08|57P0)/.test(err.code)) throw err;
      throw new ConnectionLost(err.message);
    }
  }
}

// Request the lock and wait until it is held; return the fencing token.
async function waitForGrant(db) {
  let reported = null; // the queue position last printed
  for (;;) {
    try {
      // Asking again for the same lock and holder is harmless: it reports
      // the current state (held with its token, or pending) and changes
      // nothing. So after a wake-up, a reconnect, or when in doubt, ask.
      db.events = []; // from here on, events are news
      const [req] = await db.query(
        `SELECT status, token, queue_position
           FROM sync_request($1, $2, controller => $3, lease => make_interval(secs => $4))`,
        [lock, holder, opts.controller, lease]);
      // node-postgres returns a bigint as a string, which keeps every digit;
      // BigInt() makes it a number that can be compared exactly.
      if (req.status === 'held') return BigInt(req.token);
      if (req.queue_position !== reported) {
        console.log(`pending: ${lock} for ${holder} (${req.queue_position === null
          ? 'passed over while its controller is inactive'
          : `queue position ${req.queue_position}`})`);
        reported = req.queue_position;
      }

      await db.waitForEvent(Number(opts['wait-slice']) * 1000);
      const gone = db.events.find((ev) => ev.event === 'withdrawn');
      if (gone) throw new Lost(`the request for ${lock} was withdrawn (${gone.reason})`);
      if (db.events.length === 0) {
        // Nothing happened for a slice. A controller that stops heartbeating
        // (syncwf.inactive_controller_timeout, 300 s by default) has its
        // pending requests passed over.
        await db.query('SELECT sync_heartbeat($1)', [opts.controller]);
      }
    } catch (err) {
      if (!(err instanceof ConnectionLost)) throw err;
      // The request outlived the connection and kept its place in the
      // queue; asking again reports it.
      await db.reconnect(err);
      reported = null;
    }
  }
}

// Run the job's steps while the hold is ours; throw Lost otherwise.
async function work(db, token) {
  const steps = Number(opts.steps);
  const refreshEvery = (lease / 3) * 1000;
  let refreshed = Date.now(); // the lease started at the grant, just now
  let reconnected = false;
  for (let step = 1; step <= steps;) {
    try {
      const lost = db.events.find((ev) => ev.event === 'lost');
      if (lost) throw new Lost(`${lock} was taken from ${holder} (${lost.reason})`);
      if (Date.now() - refreshed >= refreshEvery) {
        // Pushes the expiry to now + the lease. SQLSTATE SW001: the hold is
        // gone (lease expired, released by an administrator, ...), and
        // someone else may have the slot.
        await db.query('SELECT sync_refresh($1, $2)', [lock, holder]);
        refreshed = Date.now();
      }
      // Fencing: is the grant that carries this token still ours? (a later
      // grant to the same holder has another token)
      const [held] = await db.query('SELECT sync_is_held($1, $2, $3) AS ok',
                                    [lock, holder, token.toString()]);
      if (!held.ok) throw new Lost(`${lock} is no longer held by ${holder} with token ${token}`);
      if (reconnected) {
        console.log(`reconnected: ${lock} is still held by ${holder} with token ${token}`);
        reconnected = false;
      }
    } catch (err) {
      if (err instanceof ConnectionLost) {
        // The hold outlived the connection. Connect again, then refresh at
        // once (time passed while away) and check the hold again.
        await db.reconnect(err);
        reconnected = true;
        refreshed = 0;
        continue;
      }
      if (err.code === 'SW001') throw new Lost(err.message);
      throw err;
    }

    // The step itself. Pass the token to every system the step changes, so
    // that it can refuse a writer whose token is older than the newest it
    // has seen (a worker that was paused past its lease).
    await sleep(Number(opts['step-seconds']) * 1000);
    console.log(`step ${step}/${steps} done with token ${token}`);
    step += 1;
  }
}

async function release(db) {
  for (;;) {
    try {
      const [r] = await db.query('SELECT sync_release($1, $2) AS released', [lock, holder]);
      console.log(r.released ? `released: ${lock} by ${holder}`
                             : `released: ${lock} was no longer held by ${holder}`);
      return;
    } catch (err) {
      if (!(err instanceof ConnectionLost)) throw err;
      await db.reconnect(err);
    }
  }
}

async function main() {
  const db = new Database();
  await db.connect();
  try {
    const token = await waitForGrant(db);
    console.log(`granted: ${lock} to ${holder} with token ${token}`);
    try {
      await work(db, token);
    } catch (err) {
      if (err instanceof Lost) throw err;
      await release(db); // a failed job frees the lock at once
      throw err;
    }
    await release(db);
    return 0;
  } catch (err) {
    if (!(err instanceof Lost)) throw err;
    console.log(`lost: ${err.message}; stopping`);
    return 1;
  } finally {
    const client = db.client;
    db.client = null;
    if (client) await client.end();
  }
}

main().then(
  (status) => { process.exitCode = status; },
  (err) => { console.error(err); process.exitCode = 1; });
