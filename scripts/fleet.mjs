#!/usr/bin/env node
// Starts the whole fleet as separate processes with working local defaults, waits until every service
// is ready, prints how to use it, and stops everything cleanly on Ctrl-C (SIGINT/SIGTERM).
//
//   node scripts/fleet.mjs [--offset N] [--db NAME] [--prefix P] [--control-port P] [--logs] [--quiet] [--no-stand-in-demo]
//
// Managed sessions need the external agent platform: with ANTHROPIC_API_KEY set the managed service uses
// it (ANTHROPIC_BASE_URL optional); without one the fleet starts the local platform stand-in
// (packages/platform-stand-in) on port 4010 (+offset), in demo mode unless --no-stand-in-demo.
//
// --offset shifts every port (the e2e fleet runs at +10000 beside a dev fleet); --db and --prefix
// isolate its database and JetStream streams; --control-port opens a loopback-only HTTP endpoint
// (POST /stop/<svc>, POST /start/<svc>, GET /status) that tests use to really stop a service.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
const realPlatform = Boolean(process.env.ANTHROPIC_API_KEY);
const STAND_IN_KEY = 'stand-in-key';
const logDir = path.join(ROOT, '.run', offset ? `logs-${offset}` : 'logs');
fs.mkdirSync(logDir, { recursive: true });

const p = (n) => String(n + offset);
const base = {
  DATABASE_URL: process.env.FLEET_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/${dbName}`,
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0',
  NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  AGW_STREAM_PREFIX: prefix,
  AGW_PROFILE: process.env.AGW_PROFILE ?? 'local',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  POLICY_GRPC_URL: `127.0.0.1:${p(50051)}`,
  AUDIT_GRPC_URL: `127.0.0.1:${p(50052)}`,
  VAULT_GRPC_URL: `127.0.0.1:${p(50053)}`,
  WEBHOOK_GRPC_URL: `127.0.0.1:${p(50054)}`,
  ANCHOR_GRPC_URL: `127.0.0.1:${p(50055)}`,
  MANAGED_GRPC_URL: `127.0.0.1:${p(50056)}`,
  GATEWAY_PORT: p(8080),
  PUBLIC_BASE_URL: `http://127.0.0.1:${p(8080)}/api`,
};
const standInUrl = `http://127.0.0.1:${p(4010)}`;
const platformEnv = realPlatform ? {} : { ANTHROPIC_API_KEY: STAND_IN_KEY, ANTHROPIC_BASE_URL: standInUrl };

// name -> [ports env, ops port]; start order matters only for readability (each service retries its peers)
const SERVICES = [
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
  { name: 'policy', env: { POLICY_GRPC_PORT: p(50051), POLICY_OPS_PORT: p(9081) }, ops: 9081 },
  { name: 'audit', env: { AUDIT_GRPC_PORT: p(50052), AUDIT_OPS_PORT: p(9082) }, ops: 9082 },
  // further services join the fleet here as their issues land
  { name: 'vault', env: { VAULT_GRPC_PORT: p(50053), VAULT_OPS_PORT: p(9083) }, ops: 9083 },
  { name: 'webhook', env: { WEBHOOK_GRPC_PORT: p(50054), WEBHOOK_OPS_PORT: p(9084) }, ops: 9084 },
  { name: 'anchor', env: { ANCHOR_GRPC_PORT: p(50055), ANCHOR_OPS_PORT: p(9085), ANCHOR_ANVIL_PORT: p(8545) }, ops: 9085 },
  { name: 'managed', env: { MANAGED_GRPC_PORT: p(50056), MANAGED_OPS_PORT: p(9086), ...platformEnv }, ops: 9086 },
  { name: 'gateway', env: { GATEWAY_OPS_PORT: p(9080) }, ops: 9080 },
];

const children = new Map();
let stopping = false;

function startService(svc) {
  const entry = svc.entry ?? path.join(ROOT, 'services', svc.name, 'dist', 'main.js');
  if (!fs.existsSync(entry)) throw new Error(`${svc.name} is not built (${entry}); run the build first`);
  const log = fs.createWriteStream(path.join(logDir, `${svc.name}.log`), { flags: 'a' });
  const child = spawn(process.execPath, [entry, ...(svc.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, ...base, ...svc.env, ...(svc.extraEnv ?? {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = (chunk) => {
    log.write(chunk);
    if (streamLogs) process.stdout.write(chunk.toString().replace(/^/gm, `${svc.name.padEnd(8)}| `));
  };
  child.stdout.on('data', out);
  child.stderr.on('data', out);
  child.on('exit', (code, signal) => {
    children.delete(svc.name);
    log.end();
    if (!stopping && !svc.expectedStop) {
      console.error(`[fleet] ${svc.name} exited (${signal ?? code}); last lines of ${path.relative(ROOT, log.path)}:`);
      console.error(tail(path.join(logDir, `${svc.name}.log`), 15));
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
  const url = svc.readyUrl ?? `http://127.0.0.1:${p(svc.ops)}/readyz`;
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (!children.has(svc.name)) throw new Error(`${svc.name} exited during start-up`);
    if ((await get(url)) === 200) return;
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
  await Promise.all([...children.keys()].reverse().map((n) => stopService(n)));
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
        res.end(JSON.stringify({ running: [...children.keys()] }));
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
  Services: ${SERVICES.map((s) => s.name).join(', ')}   Logs: ${path.relative(ROOT, logDir)}/<service>.log

  1. Get an API key (shown once):
     curl -s -X POST ${url}/auth/signup -H 'content-type: application/json' \\
       -d '{"email":"you@example.com","password":"a-long-password","tenant_name":"Acme"}'
  2. Govern a tool call:
     curl -s -X POST ${url}/mcp/tools/call -H "X-API-Key: $API_KEY" -H 'content-type: application/json' \\
       -d '{"agent_id":"agent-1","agent_type":"assistant","agent_version":"1.0.0","tool":"svc_web_search","method":"search","params":{"q":"hello"}}'
  Managed agent sessions: ${realPlatform ? `the agent platform at ${process.env.ANTHROPIC_BASE_URL ?? 'api.anthropic.com'} (ANTHROPIC_API_KEY)` : `the LOCAL PLATFORM STAND-IN at ${standInUrl} (no ANTHROPIC_API_KEY set; its demo sessions call your governed tools)`}
  More: README.md (five-minute tour), ${url}/openapi.json.   Stop: Ctrl-C
`);
}

main().catch((e) => {
  console.error(`[fleet] ${e.message}`);
  void shutdown(1);
});
