#!/usr/bin/env node
// Run a job under a syncwf session hold, waiting at most a few seconds.
//
// A session hold belongs to this connection: it ends when the job releases
// it or when the connection ends, however that happens. That suits work that
// runs while the program stays connected. For work that must survive a
// dropped connection, use a keyed hold (keyed-worker.js).
//
//   DATABASE_URL=postgresql://app@db.example.com/app \
//     node session-hold.js --lock mtx/billing/nightly-export
//
// Without DATABASE_URL, node-postgres reads PGHOST, PGPORT, PGUSER,
// PGDATABASE and PGPASSWORD. Exit status: 0 when the job ran, 75
// (EX_TEMPFAIL) when the lock stayed busy, 1 when the connection dropped
// during the job.
'use strict';

const { Client, DatabaseError } = require('pg');
const { parseArgs } = require('node:util');
const { setTimeout: sleep } = require('node:timers/promises');

const EX_TEMPFAIL = 75;

const { values: opts } = parseArgs({
  options: {
    lock: { type: 'string', default: 'mtx/examples/nightly-export' },
    timeout: { type: 'string', default: '5' }, // seconds to wait for the lock
    try: { type: 'boolean', default: false }, // do not wait (sync_try_acquire)
    work: { type: 'string', default: '2' }, // seconds the job takes
  },
});

async function main() {
  const client = new Client({
    connectionString: process.env.DATABASE_URL, // undefined: PG* variables
    application_name: 'syncwf-example-session',
  });
  // A connection that drops ends the hold; without an 'error' listener it
  // would also end the process at once.
  let dropped = null; // why the connection dropped, if it did
  client.on('error', (err) => { dropped ??= err; });
  await client.connect();
  try {
    let token;
    if (opts.try) {
      // Never waits, never queues: NULL unless the lock is free and nobody
      // is waiting for it.
      const { rows } = await client.query('SELECT sync_try_acquire($1) AS token', [opts.lock]);
      if (rows[0].token === null) {
        console.log(`busy: ${opts.lock} is taken; try again later`);
        return EX_TEMPFAIL;
      }
      token = rows[0].token;
    } else {
      try {
        // Queues behind the current holders and sleeps until granted; after
        // the timeout the request leaves the queue and the call fails with
        // SQLSTATE 55P03. The interval is built on the server from seconds.
        const { rows } = await client.query(
          'SELECT sync_acquire($1, timeout => make_interval(secs => $2)) AS token',
          [opts.lock, Number(opts.timeout)]);
        token = rows[0].token;
      } catch (err) {
        if (err.code !== '55P03') throw err;
        console.log(`busy: ${opts.lock} not granted within ${opts.timeout} s; try again later`);
        return EX_TEMPFAIL;
      }
    }

    // node-postgres returns a bigint as a string, which keeps every digit
    // (a JavaScript number does not above 2^53); BigInt() makes it a number
    // to compare. Pass it to whatever the job changes, so that it can refuse
    // a writer whose token is older than the newest it has seen.
    token = BigInt(token);
    console.log(`acquired: ${opts.lock} with token ${token}`);
    await sleep(Number(opts.work) * 1000); // the job
    console.log(`job done with token ${token}`);
    try {
      // Ending the connection would release it too; releasing says so, and
      // frees the lock at once for the next waiter.
      await client.query('SELECT sync_release($1)', [opts.lock]);
    } catch (err) {
      if (err instanceof DatabaseError && !/^(08|57P0)/.test(err.code)) throw err;
      // The connection dropped during the job, and the hold with it:
      // someone else may have had the lock meanwhile.
      console.log(`lost: the connection dropped (${(dropped ?? err).message}), and the hold with it`);
      return 1;
    }
    console.log(`released: ${opts.lock}`);
    return 0;
  } finally {
    await client.end();
  }
}

main().then(
  (status) => { process.exitCode = status; },
  (err) => { console.error(err); process.exitCode = 1; });
