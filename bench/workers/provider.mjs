// The no-op provider for the benchmark's reference-worker rows: it answers like
// examples/demo/provider.py (POST /sends: 201 {"id": "snd_…"}; GET /sends/<key>: 404, nothing
// sent yet) but records nothing, so that the provider is not what the row measures. Node.js only,
// no packages. Prints "PROVIDER_URL=http://127.0.0.1:<port>/sends" once it listens.
//
//   node bench/workers/provider.mjs [--port 0]
import { createServer } from 'node:http'

const at = process.argv.indexOf('--port')
const port = at > 0 ? Number(process.argv[at + 1]) : 0
let sent = 0
const server = createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    const json = (status, body) => {
      response.writeHead(status, { 'Content-Type': 'application/json' })
      response.end(JSON.stringify(body))
    }
    if (request.method === 'POST' && request.url === '/sends') {
      if (!request.headers['idempotency-key']) return json(400, { error: 'Idempotency-Key missing' })
      return json(201, { id: `snd_${++sent}` })
    }
    if (request.method === 'GET' && request.url.startsWith('/sends/')) return json(404, { error: 'not sent' })
    json(404, { error: 'no such resource' })
  })
})
server.keepAliveTimeout = 60_000
server.listen(port, '127.0.0.1', () => {
  console.log(`PROVIDER_URL=http://127.0.0.1:${server.address().port}/sends`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
