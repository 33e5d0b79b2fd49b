#!/usr/bin/env node
// Argo's database locks, replayed against syncwf (docs/argo.md).
//
// Two controllers run Argo 4.x's (or 3.7's, see ARGO_VERSION) algorithm for database semaphores and
// mutexes (workflow/sync/sync_manager.go and database_semaphore.go), with
// the statements of util/sync/db/queries.go as its database library sends
// them, each in Argo's order and transactions: the pending row inserted
// autocommit; then, per attempt, its sync_lock row, and a SERIALIZABLE
// transaction that reads holders, limit and queue and claims (UPDATE ... SET
// held = true), retried on 40001/40P01 five times with back-off, and requeued
// after that; the release DELETE; heartbeats. Beside them a caller of
// syncwf's functions (sync_request, sync_release) uses the same locks.
// During the run the limit is raised with Argo's CLI statement, controller
// "ctl-b" stops (no heartbeat, no work) for longer than the inactive timeout
// and comes back, and controller "ctl-a" restarts (new connections, no
// memory but its workflows' statuses, as Argo keeps them in Kubernetes).
// Under Argo 4.x's rules both controllers also run two "twin" workflows of
// the same namespace and name on the mutex (a CronWorkflow deployed to both
// clusters): the second controller's INSERT of a key the first has queued
// fails with 40001, which Argo 4.x retries on a later pass (Argo 3.7 would
// fail the workflow, docs/argo.md), and the twins must never run at once.
//
// It prints one JSON line: what happened, and every violation seen:
//  - more workflows running on a lock than its limit (checked when each
//    acquisition commits, against the limit Argo's CLI last set);
//  - an error that Argo 4.x would not retry (it would fail the workflow);
//  - a claim statement that raised an error (Argo 3.7 fails the workflow
//    for any error of UpdateStateToHeld, counted separately);
//  - a workflow that never ran before the deadline.
//
// Connection: the PG* environment variables; ARGO_INACTIVE_SECONDS must
// match the server's syncwf.inactive_controller_timeout.
'use strict';

const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { Client } = require(path.join(
  process.env.SYNCWF_NODE_MODULES || path.join(__dirname, '..', '..', 'examples', 'node', 'node_modules'),
  'pg'));

const INACTIVE_S = Number(process.env.ARGO_INACTIVE_SECONDS || 2);
// ARGO_VERSION=3.7: Argo 3.7's rules instead, which fail a workflow for any
// error of its claim statement, and after five failed attempts, retried at
// once
const V37 = process.env.ARGO_VERSION === '3.7';
const POLL_MS = 100;             // Argo's pollSeconds, shortened
const HEARTBEAT_MS = 300;        // Argo's heartbeatSeconds, shortened
const DEADLINE_MS = Number(process.env.ARGO_DEADLINE_MS || 60000);
let seed = Number(process.env.ARGO_SEED || 12);

function random() {              // deterministic (mulberry32)
  seed = (seed + 0x6D2B79F5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(random() * a.length)];

// Argo's statements, as upper/db renders them
const Q = {
  insertController: 'INSERT INTO "sync_controller" ("controller", "time") VALUES ($1, $2) RETURNING "controller"',
  updateController: 'UPDATE "sync_controller" SET "time" = $1 WHERE ("controller" = $2)',
  getLimit: 'SELECT "sizelimit" FROM "sync_limit" WHERE ("name" = $1)',
  updateLimit: 'UPDATE "sync_limit" SET "sizelimit" = $1 WHERE ("name" = $2)',
  insertLimit: 'INSERT INTO "sync_limit" ("name", "sizelimit") VALUES ($1, $2) RETURNING "name"',
  checkQueue: 'SELECT "workflowkey" FROM "sync_state" WHERE ("name" = $1 AND "workflowkey" = $2 AND "controller" = $3)',
  addToQueue: 'INSERT INTO "sync_state" ("controller", "held", "name", "priority", "time", "workflowkey") VALUES ($1, $2, $3, $4, $5, $6) RETURNING "name", "workflowkey"',
  currentState: 'SELECT "workflowkey" FROM "sync_state" WHERE ("held" = $1 AND "name" = $2)',
  orderedQueue: 'SELECT "workflowkey", "controller" FROM "sync_state" WHERE ("name" = $1 AND "held" = $2 AND "controller" IN (SELECT "controller" FROM "sync_controller" WHERE ("time" > $3))) ORDER BY "priority" DESC, "time" ASC',
  pendingInQueue: 'SELECT "workflowkey" FROM "sync_state" WHERE ("name" = $1 AND "workflowkey" = $2 AND "controller" = $3 AND "held" = $4)',
  updateToHeld: 'UPDATE "sync_state" SET "held" = $1 WHERE ("name" = $2 AND "workflowkey" = $3 AND "controller" = $4 AND "held" = $5)',
  insertHeld: 'INSERT INTO "sync_state" ("controller", "held", "name", "priority", "time", "workflowkey") VALUES ($1, $2, $3, $4, $5, $6) RETURNING "name", "workflowkey"',
  releaseHeld: 'DELETE FROM "sync_state" WHERE ("held" = $1 AND "name" = $2 AND "workflowkey" = $3 AND "controller" = $4)',
  existingLocks: 'SELECT "name" FROM "sync_lock" WHERE ("name" = $1 AND "controller" = $2)',
  insertLock: 'INSERT INTO "sync_lock" ("controller", "name", "time") VALUES ($1, $2, $3) RETURNING "name"',
  deleteLock: 'DELETE FROM "sync_lock" WHERE ("name" = $1)',
};

const SEM = 'sem/argo/pool';     // limit 2, raised to 3 during the run
const MTX = 'mtx/argo/deploy';
const limits = { [SEM]: 2, [MTX]: 1 };
const running = { [SEM]: new Set(), [MTX]: new Set() };

const stats = {
  workflows: 0, ran: 0, api_ran: 0, attempts: 0, retries: 0, requeued: 0,
  queue_retries: 0, twins_ran: 0,
  claims: 0, claim_errors: 0, lock_busy: 0, ran_while_b_stopped: 0,
  restarts: 0, violations: [],
};
const violation = (what) => { if (stats.violations.length < 20) stats.violations.push(what); };
const retryable = (e) => e && (e.code === '40001' || e.code === '40P01' ||
  /serialization|dependencies|deadlock|rollback/i.test(String(e.message)));

async function connect(name) {
  const c = new Client({ application_name: name });
  await c.connect();
  c.on('error', () => {});
  return c;
}

class Controller {
  constructor(name, workflows) {
    this.name = name;
    this.workflows = workflows;  // survive a restart (Kubernetes keeps them)
    this.stopped = false;
  }

  async start() {
    this.auto = await connect(this.name);   // Argo's session, autocommit
    this.tx = await connect(this.name + '-tx');
    this.limitCache = {};
    await this.auto.query(Q.insertController, [this.name, new Date()]).catch(() => {});
  }

  async stop() {
    await this.auto.end().catch(() => {});
    await this.tx.end().catch(() => {});
  }

  async getLimit(lock) {           // Argo caches it (semaphoreLimitCacheSeconds)
    if (lock.startsWith('mtx/')) return 1;
    const c = this.limitCache[lock];
    if (c && Date.now() - c.at < 200) return c.limit;
    const r = await this.auto.query(Q.getLimit, [lock.slice(4)]);
    this.limitCache[lock] = { at: Date.now(), limit: r.rows[0].sizelimit };
    return r.rows[0].sizelimit;
  }

  async heartbeat() {
    if (!this.stopped)
      await this.auto.query(Q.updateController, [new Date(), this.name]);
  }

  // databaseSemaphore.lock(): a sync_lock row, autocommit
  async lock(lock) {
    const r = await this.auto.query(Q.existingLocks, [lock, this.name]);
    if (r.rowCount > 0) return true;
    try {
      await this.auto.query(Q.insertLock, [this.name, lock, new Date()]);
      return true;
    } catch (e) {
      return false;
    }
  }

  async checkAcquire(lock, key) {   // in the transaction
    const limit = await this.getLimit(lock);
    const holders = (await this.tx.query(Q.currentState, [true, lock])).rows.map((r) => r.workflowkey);
    if (holders.includes(key)) return { already: true };
    if (holders.length >= limit) return { ok: false };
    const since = new Date(Date.now() - INACTIVE_S * 1000);
    const queue = (await this.tx.query(Q.orderedQueue, [lock, false, since])).rows;
    if (queue.length === 0 || queue[0].controller !== this.name || queue[0].workflowkey !== key)
      return { ok: false };
    return { ok: true };
  }

  async acquire(lock, wf) {          // in the transaction
    const limit = await this.getLimit(lock);
    const holders = (await this.tx.query(Q.currentState, [true, lock])).rows;
    if (holders.length >= limit) return false;
    const pending = await this.tx.query(Q.pendingInQueue, [lock, wf.key, this.name, false]);
    stats.claims++;
    try {
      if (pending.rowCount > 0)
        await this.tx.query(Q.updateToHeld, [true, lock, wf.key, this.name, false]);
      else
        await this.tx.query(Q.insertHeld, [this.name, true, lock, 0, new Date(0), wf.key]);
    } catch (e) {
      stats.claim_errors++;      // Argo 3.7 fails the workflow here
      if (V37 && retryable(e))
        throw new Error(`bug: failed to acquire something that should have been checked (${e.message})`);
      throw e;
    }
    return true;
  }

  // one transaction of TryAcquire (tryAcquireImpl)
  async attempt(wf) {
    const locked = [];
    try {
      let all = true;
      for (const lock of wf.locks) {
        if (!(await this.lock(lock))) { all = false; stats.lock_busy++; continue; }
        locked.push(lock);
        const c = await this.checkAcquire(lock, wf.key);
        if (!c.ok && !c.already) all = false;
      }
      if (!all) return false;
      for (const lock of wf.locks) {
        const c = await this.checkAcquire(lock, wf.key);
        if (c.already) continue;
        if (!c.ok || !(await this.acquire(lock, wf)))
          throw new Error('bug: failed to acquire something that should have been checked');
      }
      return true;
    } finally {
      for (const lock of locked)   // Argo unlocks before its commit
        await this.auto.query(Q.deleteLock, [lock]);
    }
  }

  async tryAcquire(wf) {
    stats.attempts++;
    for (const lock of wf.locks) {   // prepAcquire, autocommit
      const r = await this.auto.query(Q.checkQueue, [lock, wf.key, this.name]);
      if (r.rowCount > 0) continue;
      try {
        await this.auto.query(Q.addToQueue, [this.name, false, lock, wf.priority, wf.created, wf.key]);
      } catch (e) {
        // Argo 4.x leaves the workflow Pending on a retryable error of
        // TryAcquire (operator.go); any other error, or any error in 3.7,
        // fails it
        if (V37 || !retryable(e)) {
          violation(`${this.name} ${wf.key}: ${e.code || ''} ${e.message} (queueing)`);
          wf.failed = true;
        } else {
          stats.queue_retries++;
        }
        return false;
      }
    }
    let delay = 10;
    for (let step = 0; step < 5; step++) {
      try {
        await this.tx.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
        const got = await this.attempt(wf);
        await this.tx.query('COMMIT');
        return got;
      } catch (e) {
        await this.tx.query('ROLLBACK').catch(() => {});
        if (!retryable(e)) {
          violation(`${this.name} ${wf.key}: ${e.code || ''} ${e.message}`);
          wf.failed = true;
          return false;
        }
        stats.retries++;
        if (!V37)
          await sleep(Math.min(600, delay * (1 + random() * 0.5)));
        delay *= 2;
      }
    }
    if (V37) {                       // "failed after 5 retries"
      violation(`${this.name} ${wf.key}: failed after 5 retries`);
      wf.failed = true;
      return false;
    }
    stats.requeued++;                // Argo 4.x: the workflow stays Pending
    return false;
  }

  async run(wf) {                    // the workflow runs, then releases
    for (const lock of wf.locks) {
      running[lock].add(`${this.name} ${wf.key}`);   // twins count twice
      if (running[lock].size > limits[lock])
        violation(`${lock}: ${running[lock].size} running, limit ${limits[lock]}`);
    }
    stats.ran++;
    if (wf.twin) stats.twins_ran++;
    if (other.b.stopped && this.name === 'ctl-a') stats.ran_while_b_stopped++;
    await sleep(20 + random() * 60);
    for (const lock of wf.locks) {
      running[lock].delete(`${this.name} ${wf.key}`);
      await this.auto.query(Q.releaseHeld, [true, lock, wf.key, this.name]);
    }
    wf.done = true;
  }

  async loop(until) {
    while (Date.now() < until && this.workflows.some((w) => !w.done && !w.failed)) {
      if (this.wantRestart) await this.restart();
      if (this.stopped) { await sleep(20); continue; }
      for (const wf of this.workflows) {
        if (wf.done || wf.failed || this.stopped) continue;
        if (await this.tryAcquire(wf)) await this.run(wf);
      }
      await sleep(POLL_MS);
    }
  }

  // a restart: new connections; held workflows are checked (reacquire)
  async restart() {
    this.wantRestart = false;
    this.restarting = true;
    await this.stop();
    await this.start();
    stats.restarts++;
    this.restarting = false;
  }
}

const other = {};

async function apiCaller(until) {
  const c = await connect('api');
  let n = 0;
  while (Date.now() < until && n < 12) {
    const key = `api/job-${n++}`;
    await c.query('SELECT sync_heartbeat($1)', ['api-ctl']);
    await c.query('SELECT * FROM sync_request($1, $2, controller => $3)', [SEM, key, 'api-ctl']);
    for (;;) {
      const r = await c.query('SELECT sync_is_held($1, $2) AS held', [SEM, key]);
      if (r.rows[0].held) break;
      if (Date.now() > until) {
        violation(`${key} never held`);
        await c.end();
        return;
      }
      await c.query('SELECT sync_heartbeat($1)', ['api-ctl']);
      await sleep(20);
    }
    running[SEM].add(key);
    if (running[SEM].size > limits[SEM])
      violation(`${SEM}: ${running[SEM].size} running, limit ${limits[SEM]} (api)`);
    stats.api_ran++;
    await sleep(20);
    running[SEM].delete(key);
    await c.query('SELECT sync_release($1, $2)', [SEM, key]);
    await sleep(30);
  }
  await c.end();
}

function workflows(ctl, count) {
  const base = Date.UTC(2024, 4, 1, 8, 0, 0);
  const list = [];
  for (let i = 0; i < count; i++) {
    const kind = pick(['sem', 'sem', 'mtx', 'both']);
    list.push({
      key: `ns-${ctl}/wf-${i}`,
      locks: kind === 'sem' ? [SEM] : kind === 'mtx' ? [MTX] : [SEM, MTX],
      priority: pick([0, 0, 1, 2]),
      // creation times of whole seconds, some equal, as Kubernetes keeps them
      created: new Date(base + Math.floor(random() * 8) * 1000),
    });
  }
  if (!V37)                     // the twins come first, so that they meet
    for (let i = 0; i < 2; i++)
      list.unshift({ key: `ns-cron/wf-${i}`, locks: [MTX], priority: 0, twin: true,
                     created: new Date(base + 9000 + i * 1000) });
  stats.workflows += list.length;
  return list;
}

async function main() {
  const admin = await connect('argo-cli');
  await admin.query(Q.insertLimit, [SEM.slice(4), 2]);
  const a = new Controller('ctl-a', workflows('a', 24));
  const b = new Controller('ctl-b', workflows('b', 24));
  other.b = b;
  await a.start();
  await b.start();
  const until = Date.now() + DEADLINE_MS;
  let beating = true;
  const beats = (async () => {
    while (beating) {
      await Promise.all([a, b].map((c) => (c.restarting ? null : c.heartbeat().catch(() => {}))));
      await sleep(HEARTBEAT_MS);
    }
  })();
  const events = (async () => {
    await sleep(600);
    limits[SEM] = 3;                 // before the change can grant anyone
    await admin.query(Q.updateLimit, [3, SEM.slice(4)]);
    await sleep(300);
    a.wantRestart = true;            // ctl-a restarts
    await sleep(300);
    b.stopped = true;                // ctl-b goes away for a while
    await sleep(INACTIVE_S * 1000 + 1500);
    b.stopped = false;
  })();
  await Promise.all([a.loop(until), b.loop(until), apiCaller(until), events]);
  beating = false;
  await beats;
  for (const c of [a, b])
    for (const wf of c.workflows)
      if (!wf.done) violation(`${wf.key} ${wf.failed ? 'failed' : 'never ran'}`);
  if (stats.violations.length > 0) {   // what the queues looked like
    const q = await admin.query(
      "SELECT name, workflowkey, controller, held, priority, time, claim FROM sync_state " +
      "WHERE name LIKE '%/argo/%' ORDER BY name, held DESC, priority DESC, time, seq");
    stats.state = q.rows.map((r) => `${r.name} ${r.workflowkey} ${r.controller} ${r.held} ${r.priority} ${r.time.toISOString()}`);
    const w = await admin.query("SELECT lock_name, holder, position, active FROM sync_waiters WHERE lock_name LIKE '%/argo/%' ORDER BY 1, 3");
    stats.waiters = w.rows.map((r) => `${r.lock_name} ${r.holder} ${r.position} ${r.active}`);
    const h = await admin.query("SELECT lock_name, holder FROM sync_holders WHERE lock_name LIKE '%/argo/%'");
    stats.holders = h.rows.map((r) => `${r.lock_name} ${r.holder}`);
  }
  const left = await admin.query(
    "SELECT (SELECT count(*) FROM sync_state WHERE name LIKE '%/argo/%') AS rows, " +
    "(SELECT count(*) FROM sync_holders WHERE lock_name LIKE '%/argo/%') AS holds, " +
    "(SELECT count(*) FROM sync_lock) AS lock_rows");
  stats.left = left.rows[0];
  await a.stop();
  await b.stop();
  await admin.end();
  console.log(JSON.stringify(stats));
}

main().catch((e) => {
  console.log(JSON.stringify({ error: `${e.code || ''} ${e.message}` }));
  process.exit(1);
});
