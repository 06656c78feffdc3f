// A peer in claimq's benchmark: Graphile Worker 0.17 draining a preloaded backlog of no-op jobs,
// in-process (no HTTP), on the same PostgreSQL, in its own schema. bench/run.sh runs it; by hand:
//
//   node bench/graphile/bench.mjs --db postgres://postgres@127.0.0.1:5432/claimq_bench \
//     --mode single --concurrency 8 --preload 50000 --warmup 1 --seconds 5
//
// --mode single:  each of the 8 workers fetches (locks) one job, runs it, completes it: two
//                 statements per job, like claim-next + complete.
// --mode batched: localQueue of --batch (500) jobs fetched at once, completions batched
//                 (completeJobBatchDelay 0): Graphile Worker's fastest documented setting.
// The jobs go into the table first (outside the measurement), then the table is settled
// (VACUUM ANALYZE, CHECKPOINT) as bench/run.sh does for claimq. The rate counts jobs run inside
// the measured window; the window ends early (short=1) when the backlog is nearly gone, so an
// empty queue is never measured. Prints one line of key=value pairs.
import pg from 'pg'
import { Logger, run, runMigrations } from 'graphile-worker'

const opts = {}
const argv = process.argv.slice(2)
for (let i = 0; i + 1 < argv.length; i += 2) opts[argv[i].replace(/^--/, '')] = argv[i + 1]
const db = opts.db ?? 'postgres://postgres@127.0.0.1:5432/claimq_bench'
if (!/@(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(db)) throw new Error('loopback databases only')
const mode = opts.mode ?? 'single'
if (mode !== 'single' && mode !== 'batched') throw new Error('--mode single|batched')
const concurrency = Number(opts.concurrency ?? 8)
const preload = Number(opts.preload ?? 50000)
const batch = Number(opts.batch ?? 500)
const warmup = Number(opts.warmup ?? 1)
const seconds = Number(opts.seconds ?? 5)
const schema = 'graphile_worker'
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const watchdog = setTimeout(() => { console.error('graphile bench: timed out'); process.exit(3) },
  (warmup + seconds + 300) * 1000)
const quiet = new Logger(() => (level, message) => { if (level === 'error') errors.push(message) })
const errors = []

const preset = {
  worker: {
    connectionString: db,
    schema,
    concurrentJobs: concurrency,
    // claimq's pool holds at most 20 connections; Graphile Worker gets its default (10).
    pollInterval: 1000,
    ...(mode === 'batched' ? { localQueue: { size: batch }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } : {})
  }
}

await runMigrations({ preset, logger: quiet })
const client = new pg.Client({ connectionString: db })
await client.connect()
await client.query(`DELETE FROM ${schema}._private_jobs`)
await client.query(`DELETE FROM ${schema}._private_job_queues`)
for (let i = 0; i < preload; i += 50000) {
  const n = Math.min(50000, preload - i)
  await client.query(
    `SELECT ${schema}.add_jobs(array(
       SELECT json_populate_record(null::${schema}.job_spec,
         json_build_object('identifier', 'bench', 'payload', json_build_object('to', 'bench@example.com', 'n', g)))
       FROM generate_series($1::int, $2::int) g))`, [i + 1, i + n])
}
await client.query(`VACUUM ANALYZE ${schema}._private_jobs`)
await client.query('CHECKPOINT')

let done = 0
const runner = await run({
  preset,
  logger: quiet,
  noHandleSignals: true,
  taskList: { bench: async () => { done++ } }
})
const nearlyEmpty = preload * 0.95
await sleep(warmup * 1000)
const done0 = done
const t0 = process.hrtime.bigint()
const end = Date.now() + seconds * 1000
let short = 0
while (Date.now() < end) {
  if (done >= nearlyEmpty) { short = 1; break }
  await sleep(20)
}
const items = done - done0
const elapsed = Number(process.hrtime.bigint() - t0) / 1e9
await runner.stop()
const { rows } = await client.query(`SELECT count(*)::int AS left FROM ${schema}._private_jobs`)
await client.query(`DROP SCHEMA ${schema} CASCADE`)
await client.end()
clearTimeout(watchdog)
let line = `rate=${(items / elapsed).toFixed(1)} items=${items} seconds=${elapsed.toFixed(2)} short=${short} left=${rows[0].left} errors=${errors.length}`
if (errors.length) line += ` error_sample=${String(errors[0]).replace(/\s+/g, '_').slice(0, 200)}`
console.log(line)
