#!/usr/bin/env node
// Starts the whole fleet as separate processes with working local defaults, waits until every service
// is ready, prints how to use it, and stops everything cleanly on Ctrl-C (SIGINT/SIGTERM).
//
//   node scripts/fleet.mjs [--offset N] [--db NAME] [--prefix P] [--control-port P] [--replicas N] [--logs] [--quiet] [--no-stand-in-demo] [--no-demo-upstream]
//
// --replicas N (or AGW_REPLICAS=N; default 1) runs N replicas of every service against the same Postgres,
// Redis and NATS (docs/operations.md, "Scale"): replica k (k = 2..N, named e.g. `policy-2`) listens on the
// base gRPC and ops ports + 10*(k-1); the N gateways listen on 8081..8080+N behind a round-robin proxy in
// this process on the public port 8080 (scripts/round-robin-proxy.mjs), every gRPC client gets the list of
// its peer's replicas (ip:port,ip:port: one channel, round_robin), and the local chain (anvil) runs beside
// the anchor replicas instead of inside one of them.
//
// Managed sessions need the external agent platform: with ANTHROPIC_API_KEY set the managed service uses
// it (ANTHROPIC_BASE_URL optional); without one the fleet starts the local platform stand-in
// (packages/platform-stand-in) on port 4010 (+offset), in demo mode unless --no-stand-in-demo.
//
// --offset shifts every port (the e2e fleet runs at +10000 beside a dev fleet); --db and --prefix
// isolate its database and JetStream streams; --control-port opens a loopback-only HTTP endpoint
// (POST /stop/<svc>, POST /start/<svc>, GET /status with each service's pid) that tests use to really stop a
// service or read what a process holds (/proc/<pid>).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { roundRobinProxy } from './round-robin-proxy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const flag = (name) => args.includes(`--${name}`);
const offset = Number(opt('offset', '0'));
const dbName = opt('db', 'agw');
const prefix = opt('prefix', '');
const controlPort = opt('control-port', '');
const streamLogs = flag('logs');
const quiet = flag('quiet');
const replicasSetting = opt('replicas', process.env.AGW_REPLICAS || '1');
const replicas = Number(replicasSetting);
if (!Number.isInteger(replicas) || replicas < 1 || replicas > 9) {
  console.error(`[fleet] AGW_REPLICAS (--replicas) must be a whole number from 1 to 9, got "${replicasSetting}"`);
  process.exit(2);
}
const realPlatform = Boolean(process.env.ANTHROPIC_API_KEY);
const STAND_IN_KEY = 'stand-in-key';
/** anvil's first development account: a publicly known key, only for the local chain (services/anchor/src/config.ts) */
const ANVIL_DEV_KEY_PUBLIC = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const logDir = path.join(ROOT, '.run', offset ? `logs-${offset}` : 'logs');
fs.mkdirSync(logDir, { recursive: true });

const p = (n) => String(n + offset);
/** ports of replica k (0-based): gRPC and ops ports move by 10 per replica, gateways take 8081.. behind the proxy */
const rp = (n, k) => String(n + 10 * k + offset);
const peers = (port) => Array.from({ length: replicas }, (_, k) => `127.0.0.1:${rp(port, k)}`).join(',');
const anvilRpcUrl = `http://127.0.0.1:${p(8545)}`;
const base = {
  DATABASE_URL: process.env.FLEET_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/${dbName}`,
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0',
  NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  AGW_STREAM_PREFIX: prefix,
  AGW_PROFILE: process.env.AGW_PROFILE ?? 'local',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  // one session-token key for every gateway replica of this fleet (each would draw its own otherwise, and a
  // token signed by one replica would be refused by the next); production sets JWT_SECRET from a secret
  JWT_SECRET: process.env.JWT_SECRET ?? randomBytes(32).toString('base64url'),
  POLICY_GRPC_URL: peers(50051),
  AUDIT_GRPC_URL: peers(50052),
  VAULT_GRPC_URL: peers(50053),
  WEBHOOK_GRPC_URL: peers(50054),
  ANCHOR_GRPC_URL: peers(50055),
  MANAGED_GRPC_URL: peers(50056),
  GATEWAY_PORT: p(8080),
  PUBLIC_BASE_URL: `http://127.0.0.1:${p(8080)}/api`,
  // N replicas of 7 services must fit Postgres' max_connections (100 by default): the pools shrink with N
  // (DB_POOL_MAX 10 per process at N=1, 5 at N=2, 3 from N=3) unless DB_POOL_MAX is set
  ...(replicas > 1 && !process.env.DB_POOL_MAX ? { DB_POOL_MAX: String(Math.max(3, Math.floor(10 / replicas))) } : {}),
};
const standInUrl = `http://127.0.0.1:${p(4010)}`;
const demoUpstream = !quiet && !flag('no-demo-upstream') && (process.env.AGW_PROFILE ?? 'local') === 'local';
const demoUpstreamUrl = `http://127.0.0.1:${p(3001)}/mcp`;
const platformEnv = realPlatform ? {} : { ANTHROPIC_API_KEY: STAND_IN_KEY, ANTHROPIC_BASE_URL: standInUrl };

// one local C2SP witness (packages/witness) that cosigns every tenant's checkpoints (docs/evidence.md,
// "Witnesses"): its key is made once per port under .run/witness, it pins each tenant's log on first contact
// (origins under <EVIDENCE_LOG_HOST>/agw/), and the audit service sends it every new checkpoint
const witnessPort = p(7380);
const witnessUrl = `http://127.0.0.1:${witnessPort}`;
const witnessDir = path.join(ROOT, '.run', 'witness');
const witnessCli = path.join(ROOT, 'packages/witness/dist/cli.js');
let witnessVkey = '';
if (fs.existsSync(witnessCli)) {
  fs.mkdirSync(witnessDir, { recursive: true });
  const keygen = spawnSync(process.execPath, [witnessCli, 'keygen', '--name', `localhost/agw-witness-${witnessPort}`, '--out', path.join(witnessDir, `witness-${witnessPort}.key`)], { encoding: 'utf8' });
  if (keygen.status === 0) witnessVkey = keygen.stdout.trim();
}
const witnessEnv = witnessVkey && !process.env.AUDIT_WITNESSES ? { AUDIT_WITNESSES: `${witnessUrl} ${witnessVkey}` } : {};

// with several anchor replicas the local chain is one node beside them (started by this process), so
// killing an anchor replica never takes the chain with it
const sharedChainEnv =
  replicas > 1 && !process.env.ANCHOR_RPC_URL
    ? { ANCHOR_RPC_URL: anvilRpcUrl, ANCHOR_CHAIN: 'local', ANCHOR_PRIVATE_KEY: ANVIL_DEV_KEY_PUBLIC, ANCHOR_TRIGGER_MIN_INTERVAL_SECONDS: process.env.ANCHOR_TRIGGER_MIN_INTERVAL_SECONDS ?? '0' }
    : {};

// name -> [ports env, ops port]; start order matters only for readability (each service retries its peers)
const SERVICE_KINDS = [
  // the local stand-in of the external agent platform, only when no real one is configured
  ...(realPlatform
    ? []
    : [
        {
          name: 'platform',
          entry: path.join(ROOT, 'packages/platform-stand-in/dist/cli.js'),
          args: ['--port', p(4010), '--api-key', STAND_IN_KEY, ...(flag('no-stand-in-demo') ? [] : ['--demo'])],
          readyUrl: `${standInUrl}/_stand-in/health`,
        },
      ]),
  // a real upstream MCP server from the npm registry (@modelcontextprotocol/server-everything), for trying
  // federation (docs/federation.md) in the interactive fleet; the test fleets start their own upstreams
  ...(demoUpstream
    ? [
        {
          name: 'demo-upstream',
          entry: createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js', { paths: [ROOT] }),
          args: ['streamableHttp'],
          extraEnv: { PORT: p(3001) },
          readyUrl: demoUpstreamUrl,
          readyAnyStatus: true,
        },
      ]
    : []),
  ...(witnessVkey
    ? [
        {
          name: 'witness',
          entry: witnessCli,
          args: ['serve', '--key', path.join(witnessDir, `witness-${witnessPort}.key`), '--state', path.join(witnessDir, `state-${witnessPort}.json`), '--port', witnessPort, '--pin-prefix', `${process.env.EVIDENCE_LOG_HOST ?? 'localhost'}/agw/`],
          readyUrl: `${witnessUrl}/`,
        },
      ]
    : []),
  { name: 'policy', env: (k) => ({ POLICY_GRPC_PORT: rp(50051, k), POLICY_OPS_PORT: rp(9081, k) }), ops: 9081 },
  { name: 'audit', env: (k) => ({ AUDIT_GRPC_PORT: rp(50052, k), AUDIT_OPS_PORT: rp(9082, k), ...witnessEnv }), ops: 9082 },
  // further services join the fleet here as their issues land
  { name: 'vault', env: (k) => ({ VAULT_GRPC_PORT: rp(50053, k), VAULT_OPS_PORT: rp(9083, k) }), ops: 9083 },
  { name: 'webhook', env: (k) => ({ WEBHOOK_GRPC_PORT: rp(50054, k), WEBHOOK_OPS_PORT: rp(9084, k) }), ops: 9084 },
  { name: 'anchor', env: (k) => ({ ANCHOR_GRPC_PORT: rp(50055, k), ANCHOR_OPS_PORT: rp(9085, k), ANCHOR_ANVIL_PORT: p(8545), ...sharedChainEnv }), ops: 9085 },
  { name: 'managed', env: (k) => ({ MANAGED_GRPC_PORT: rp(50056, k), MANAGED_OPS_PORT: rp(9086, k), ...platformEnv }), ops: 9086 },
  {
    name: 'gateway',
    env: (k) => ({ GATEWAY_OPS_PORT: rp(9080, k), ...(replicas > 1 ? { GATEWAY_PORT: p(8081 + k) } : {}) }),
    ops: 9080,
  },
];
// one entry per process: replica 1 keeps the service's name (so `--replicas 1` is the fleet as it always
// was), replica k is `<name>-k`
const SERVICES = SERVICE_KINDS.flatMap((kind) =>
  kind.env
    ? Array.from({ length: replicas }, (_, k) => ({ ...kind, name: k === 0 ? kind.name : `${kind.name}-${k + 1}`, kind: kind.name, env: kind.env(k), opsPort: rp(kind.ops, k), replica: k }))
    : [{ ...kind, kind: kind.name, replica: 0 }],
);
const gatewayPorts = Array.from({ length: replicas }, (_, k) => Number(p(8081 + k)));

const children = new Map();
let stopping = false;
let proxy;
let sharedChain;

/** The local chain shared by the anchor replicas (the anchor service's own embedded-anvil module). */
async function startSharedChain() {
  const require = createRequire(import.meta.url);
  const { startEmbeddedAnvil } = require(path.join(ROOT, 'services/anchor/dist/chain/embedded-anvil.js'));
  const log = fs.createWriteStream(path.join(logDir, 'anvil.log'), { flags: 'a' });
  const line = (level) => (obj, msg) => log.write(`${JSON.stringify({ level, time: new Date().toISOString(), ...(typeof obj === 'object' ? obj : { msg: obj }), msg })}\n`);
  const logger = { info: line('info'), warn: line('warn'), error: line('error'), debug: () => {} };
  return startEmbeddedAnvil({ host: '127.0.0.1', port: Number(p(8545)), chainId: 31337, stateFile: path.join(ROOT, '.run', 'anvil', `state-${p(8545)}.json`), logger });
}

/**
 * V8 flags of every service, from scripts/node-flags.json (the e2e helpers that start services themselves
 * read the same file; the Dockerfile sets the same in NODE_OPTIONS, and a test holds the two equal). Node
 * 24 sizes the young generation from the heap limit: up to 64 MB per semi-space on these machines, 16 MB on
 * Node 20, so each service's committed heap grew by about 100 MB under load (the soak saw the audit service's
 * go from 54 to 173 MB in five minutes). 16 MB keeps Node 20's footprint (docs/history/performance-2026.md, "Ninth session").
 */
export const NODE_FLAGS = JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts/node-flags.json'), 'utf8'));

function startService(svc) {
  const entry = svc.entry ?? path.join(ROOT, 'services', svc.kind ?? svc.name, 'dist', 'main.js');
  if (!fs.existsSync(entry)) throw new Error(`${svc.name} is not built (${entry}); run the build first`);
  const logPath = path.join(logDir, `${svc.name}.log`);
  // Without --logs a service writes its log file itself (the file is its stdout and stderr): nothing passes
  // through this process, which otherwise read and copied every line (a loaded gateway logs each request:
  // 0.07-0.10 ms of this process's CPU per governed call, docs/history/performance-2026.md). With --logs the lines come
  // through here to be prefixed on the terminal, and go to the file too.
  const fd = streamLogs ? null : fs.openSync(logPath, 'a');
  const child = spawn(process.execPath, [...NODE_FLAGS, entry, ...(svc.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, ...base, ...svc.env, ...(svc.extraEnv ?? {}) },
    stdio: fd === null ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd, fd],
  });
  if (fd !== null) fs.closeSync(fd); // the child holds its own copy
  const log = fd === null ? fs.createWriteStream(logPath, { flags: 'a' }) : null;
  if (log) {
    const out = (chunk) => {
      log.write(chunk);
      process.stdout.write(chunk.toString().replace(/^/gm, `${svc.name.padEnd(8)}| `));
    };
    child.stdout.on('data', out);
    child.stderr.on('data', out);
  }
  child.on('exit', (code, signal) => {
    children.delete(svc.name);
    log?.end();
    if (!stopping && !svc.expectedStop) {
      console.error(`[fleet] ${svc.name} exited (${signal ?? code}); last lines of ${path.relative(ROOT, logPath)}:`);
      console.error(tail(logPath, 15));
    }
    svc.expectedStop = false;
  });
  children.set(svc.name, child);
  return child;
}

function tail(file, n) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
}

function get(url, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => {
      req.destroy();
      resolve(0);
    });
  });
}

async function waitReady(svc, timeoutMs = 90_000) {
  const url = svc.readyUrl ?? `http://127.0.0.1:${svc.opsPort}/readyz`;
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (!children.has(svc.name)) throw new Error(`${svc.name} exited during start-up`);
    const status = await get(url);
    if (status === 200 || (svc.readyAnyStatus && status > 0)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${svc.name} not ready after ${timeoutMs / 1000}s (see ${path.join(logDir, `${svc.name}.log`)})`);
}

async function stopService(name) {
  const child = children.get(name);
  if (!child) return;
  const svc = SERVICES.find((s) => s.name === name);
  if (svc) svc.expectedStop = true;
  await new Promise((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 8000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  if (!quiet) console.log('\n[fleet] stopping…');
  proxy?.close();
  await Promise.all([...children.keys()].reverse().map((n) => stopService(n)));
  await sharedChain?.stop();
  if (!quiet) console.log('[fleet] stopped');
  process.exit(code);
}
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));

function controlServer(port) {
  const server = http.createServer(async (req, res) => {
    const [, action, name] = (req.url ?? '').split('/');
    const svc = SERVICES.find((s) => s.name === name);
    try {
      if (req.method === 'GET' && action === 'status') {
        res.end(JSON.stringify({ running: [...children.keys()], pids: Object.fromEntries([...children].map(([n, c]) => [n, c.pid])) }));
      } else if (req.method === 'POST' && action === 'stop' && svc) {
        await stopService(name);
        res.end(JSON.stringify({ stopped: name }));
      } else if (req.method === 'POST' && action === 'kill' && svc) {
        svc.expectedStop = true;
        children.get(name)?.kill('SIGKILL');
        await new Promise((r) => setTimeout(r, 300));
        res.end(JSON.stringify({ killed: name }));
      } else if (req.method === 'POST' && action === 'start' && svc) {
        if (!children.has(name)) startService(svc);
        await waitReady(svc);
        res.end(JSON.stringify({ started: name }));
      } else {
        res.statusCode = 404;
        res.end('{}');
      }
    } catch (e) {
      res.statusCode = 500;
      res.end(JSON.stringify({ error: String(e) }));
    }
  });
  server.listen(Number(port), '127.0.0.1');
}

async function main() {
  const migrate = spawnSync(process.execPath, [path.join(ROOT, 'packages/shared/dist/db/migrate-cli.js')], {
    env: { ...process.env, DATABASE_URL: base.DATABASE_URL },
    encoding: 'utf8',
  });
  if (migrate.status !== 0) {
    console.error(migrate.stderr || migrate.stdout);
    process.exit(1);
  }
  if (!quiet) console.log(`[fleet] ${migrate.stdout.trim()}`);
  if (sharedChainEnv.ANCHOR_RPC_URL) {
    try {
      sharedChain = await startSharedChain();
    } catch (e) {
      console.error(`[fleet] the local chain did not start: ${e.message}`);
      process.exit(1);
    }
  }
  if (replicas > 1) {
    proxy = roundRobinProxy({ port: Number(p(8080)), upstreams: gatewayPorts.map((port) => ({ host: '127.0.0.1', port })) });
    await proxy.listening;
  }
  for (const svc of SERVICES) startService(svc);
  try {
    for (const svc of SERVICES) await waitReady(svc);
  } catch (e) {
    console.error(`[fleet] ${e.message}`);
    await shutdown(1);
    return;
  }
  if (controlPort) controlServer(controlPort);
  const url = base.PUBLIC_BASE_URL;
  if (quiet) {
    console.log(`FLEET_READY ${url}`);
    return;
  }
  console.log(`
  Agent Governance Gateway is running: ${url}
  Operator console (sign up or sign in in the browser): ${url.replace(/\/api$/, '/')}
  Services: ${SERVICES.map((s) => s.name).join(', ')}   Logs: ${path.relative(ROOT, logDir)}/<service>.log${replicas > 1 ? `\n  ${replicas} replicas of each service; ${url} round-robins over the gateways on ports ${gatewayPorts.join(', ')}` : ''}

  1. Get an API key (shown once):
     curl -s -X POST ${url}/auth/signup -H 'content-type: application/json' \\
       -d '{"email":"you@example.com","password":"a-long-password","tenant_name":"Acme"}'
  2. Govern a tool call:
     curl -s -X POST ${url}/mcp/tools/call -H "X-API-Key: $API_KEY" -H 'content-type: application/json' \\
       -d '{"agent_id":"agent-1","agent_type":"assistant","agent_version":"1.0.0","tool":"svc_web_search","method":"search","params":{"q":"hello"}}'
${
    demoUpstream
      ? `  3. Put a real MCP server behind the gateway (the DEMO UPSTREAM @modelcontextprotocol/server-everything runs at ${demoUpstreamUrl}):
     curl -s -X POST ${url}/upstreams -H "X-API-Key: $API_KEY" -H 'content-type: application/json' \\
       -d '{"name":"everything","url":"${demoUpstreamUrl}"}'
     then any MCP client at ${url}/mcp/server sees its tools as everything__<tool>, governed (docs/federation.md)
`
      : ''
  }  Witness: a LOCAL WITNESS (agw-witness, C2SP tlog-witness) at ${witnessUrl} cosigns every checkpoint; its key: ${witnessVkey || '(not built)'}
     check a compliance export against it: agw-verify export.json --vkey vkey.txt --witness '${witnessVkey}' (docs/evidence.md, "Witnesses")
  Managed agent sessions: ${realPlatform ? `the agent platform at ${process.env.ANTHROPIC_BASE_URL ?? 'api.anthropic.com'} (ANTHROPIC_API_KEY)` : `the LOCAL PLATFORM STAND-IN at ${standInUrl} (no ANTHROPIC_API_KEY set; its demo sessions call your governed tools)`}
  More: README.md (five-minute tour), ${url}/openapi.json.   Stop: Ctrl-C
`);
}

main().catch((e) => {
  console.error(`[fleet] ${e.message}`);
  void shutdown(1);
});
