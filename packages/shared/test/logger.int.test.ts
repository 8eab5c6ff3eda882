/**
 * The logger buffers stdout (logger.ts: 4 KB, at most LOG_FLUSH_MS): a line logged by a quiet process still
 * leaves within the flush interval, and nothing logged is lost when the process exits, by process.exit or by
 * an uncaught exception. Each case is a real process writing into a pipe (the built logger, dist/logger.js).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { LOG_FLUSH_MS } from '../src/logger';

const LOGGER = path.resolve(__dirname, '../dist/logger.js');

/** Runs `body` in a node process with `log` = createLogger('t'); resolves to its stdout lines as they came, with when each came (ms after start). */
function run(body: string, killAfterMs = 10_000): Promise<{ lines: Array<{ msg: string; at: number; line: Record<string, unknown> }>; code: number | null }> {
  const child = spawn(process.execPath, ['-e', `const log = require(${JSON.stringify(LOGGER)}).createLogger('t', 'info');\n${body}`], { stdio: ['ignore', 'pipe', 'ignore'] });
  const started = Date.now();
  const lines: Array<{ msg: string; at: number; line: Record<string, unknown> }> = [];
  let rest = '';
  child.stdout.on('data', (b: Buffer) => {
    const parts = (rest + b.toString()).split('\n');
    rest = parts.pop() ?? '';
    for (const l of parts) if (l) lines.push({ msg: (JSON.parse(l) as { msg: string }).msg, at: Date.now() - started, line: JSON.parse(l) as Record<string, unknown> });
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return new Promise((resolve) => child.on('close', (code) => (clearTimeout(timer), resolve({ lines, code }))));
}

test('a line logged by a quiet process leaves within the flush interval', async () => {
  const { lines } = await run(`log.info('alone'); setTimeout(() => log.info('later'), ${LOG_FLUSH_MS * 3}); setTimeout(() => process.exit(0), ${LOG_FLUSH_MS * 3 + 100});`);
  expect(lines.map((l) => l.msg)).toEqual(['alone', 'later']);
  // 'alone' came long before the process ended: the periodic flush sent it, not the exit
  expect(lines[0].at).toBeLessThan(LOG_FLUSH_MS * 2.5);
});

test('every line is written when the process exits, by process.exit or an uncaught exception', async () => {
  const exited = await run(`for (let i = 0; i < 5; i++) log.info('line ' + i); process.exit(3);`);
  expect(exited.code).toBe(3);
  expect(exited.lines.map((l) => l.msg)).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4']);

  const crashed = await run(`log.error('before the crash'); setImmediate(() => { throw new Error('boom'); });`);
  expect(crashed.code).not.toBe(0);
  expect(crashed.lines.map((l) => l.msg)).toEqual(['before the crash']);
});

test('a burst larger than the buffer is written whole and in order', async () => {
  const { lines } = await run(`for (let i = 0; i < 2000; i++) log.info('n' + i); setTimeout(() => process.exit(0), 50);`);
  expect(lines).toHaveLength(2000);
  expect(lines.every((l, i) => l.msg === `n${i}`)).toBe(true);
});

test('the fixed-field logger (the access log) writes into the same stream in order; the logger itself still redacts', async () => {
  const { lines } = await run(
    `const access = require(${JSON.stringify(LOGGER)}).fixedFieldLogger(log);
     log.info({ apiKey: 'agw_secret', params: { q: 1 } }, 'one');
     access.info({ reqId: 'r1', status: 200, path: '/mcp/tools/call' }, 'request');
     log.info({ token: 't0k' }, 'three');
     process.exit(0);`,
  );
  expect(lines.map((l) => l.msg)).toEqual(['one', 'request', 'three']);
  expect(lines[0].line).toMatchObject({ service: 't', apiKey: '[redacted]', params: '[redacted]' });
  expect(lines[1].line).toMatchObject({ service: 't', level: 'info', reqId: 'r1', status: 200, path: '/mcp/tools/call' });
  expect(lines[2].line).toMatchObject({ token: '[redacted]' });
  expect(JSON.stringify(lines)).not.toMatch(/agw_secret|t0k/);
});
