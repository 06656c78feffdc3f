// A peer in claimq's benchmark: pg-boss 12 doing what bench/LoadGen.java asks of claimq, on the
// same PostgreSQL, in its own schema. bench/run.sh runs it; by hand:
//
//   node bench/pgboss/bench.mjs enqueue --db postgres://postgres@127.0.0.1:5432/claimq_bench \
//     --clients 8 --warmup 1 --seconds 5
//   node bench/pgboss/bench.mjs drain --db ... --workers 8 --preload 50000 --warmup 1 --seconds 5
//
// enqueue: C concurrent send() loops, one job each (jobs/s).
// drain:   N concurrent fetch() + complete() loops, one job each, like a worker (jobs/s); the
//          jobs go into a new queue, filled with --preload jobs first, outside the measurement.
// Prints one line of key=value pairs. Every loop ends by time; the process exits on its own.
// pg-boss 12 needs Node.js 22: bench/run.sh runs this with the node that `npm ci` here installs
// (the npm package `node`, into node_modules/node/bin), whatever node is on the PATH.
import { PgBoss } from 'pg-boss'

const [mode, ...rest] = process.argv.slice(2)
const opts = {}
for (let i = 0; i + 1 < rest.length; i += 2) opts[rest[i].replace(/^--/, '')] = rest[i + 1]

const db = opts.db ?? 'postgres://postgres@127.0.0.1:5432/claimq_bench'
if (!/@(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(db)) throw new Error('loopback databases only')
const schema = opts.schema ?? 'pgboss_bench'
let queue = opts.queue ?? 'bench'
const warmup = Number(opts.warmup ?? 1)
const seconds = Number(opts.seconds ?? 5)
const concurrency = Number(opts.clients ?? opts.workers ?? 8)
// claimq's connection pool holds 20 connections; give pg-boss no more.
const pool = Math.min(concurrency, Number(opts.pool ?? 20))

const boss = new PgBoss({
  connectionString: db,
  schema,
  max: pool,
  // The measurement only: no maintenance, no cron, no monitoring timers in the way.
  supervise: false,
  schedule: false
})
boss.on('error', (e) => { errors++; sample ??= String(e) })

let errors = 0
let sample
let done = 0
let empty = 0
let stop = false
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
// A hard stop in case a call hangs: the run is bounded whatever happens.
const watchdog = setTimeout(() => { console.error('pgboss bench: timed out'); process.exit(3) },
  (warmup + seconds + 120) * 1000)

await boss.start()
if (!(await boss.getQueue(queue))) await boss.createQueue(queue)

async function loop (once) {
  while (!stop) {
    try {
      await once()
    } catch (e) {
      errors++
      sample ??= String(e)
    }
  }
}

let work
if (mode === 'enqueue') {
  let n = 0
  work = async () => {
    await boss.send(queue, { to: 'bench@example.com', n: n++ })
    done++
  }
} else if (mode === 'drain') {
  const preload = Number(opts.preload ?? 50000)
  // A fresh queue (pg-boss gives each its own partition) is the same clean start as claimq's
  // truncated table.
  queue = `${queue}-${Date.now().toString(36)}`
  await boss.createQueue(queue)
  for (let i = 0; i < preload; i += 1000) {
    const jobs = []
    for (let j = i; j < Math.min(preload, i + 1000); j++) {
      jobs.push({ data: { to: 'bench@example.com', n: j } })
    }
    await boss.insert(queue, jobs)
  }
  // As bench/run.sh does after claimq's preload: settle the table (statistics, hint bits, no
  // autovacuum due) and flush the preload's WAL before anything is measured.
  await boss.getDb().executeSql(`VACUUM ANALYZE ${schema}.job`)
  await boss.getDb().executeSql('CHECKPOINT')
  work = async () => {
    const [job] = await boss.fetch(queue)
    if (!job) {
      empty++
      return
    }
    await boss.complete(queue, job.id)
    done++
  }
} else {
  console.error('usage: node bench/pgboss/bench.mjs enqueue|drain --db URL [--clients N | --workers N] [--preload K] [--warmup S] [--seconds S]')
  process.exit(2)
}

const loops = Array.from({ length: concurrency }, () => loop(work))
await sleep(warmup * 1000)
const done0 = done
const empty0 = empty
const t0 = process.hrtime.bigint()
await sleep(seconds * 1000)
const items = done - done0
const elapsed = Number(process.hrtime.bigint() - t0) / 1e9
stop = true
await Promise.all(loops)
await boss.stop({ graceful: false, wait: true, timeout: 5000 })
clearTimeout(watchdog)
let line = `rate=${(items / elapsed).toFixed(1)} items=${items} seconds=${elapsed.toFixed(2)} empty=${empty - empty0} errors=${errors}`
if (errors) line += ` error_sample=${String(sample).replace(/\s+/g, '_').slice(0, 200)}`
console.log(line)
