/**
 * Inside a call, through a running fleet (docs/mcp.md, "Methods"): an upstream of revision 2026-07-28
 * (packages/mcp-fixtures modern-server.ts, the official SDK v2 server) reached by the vault's SDK v2 client
 * at that revision:
 * - its own `input_required` (SEP-2322: a form elicitation and its requestState) reaches the official v2
 *   client as the gateway's `input_required`, the upstream's state inside the gateway's signed one; the
 *   client's answer goes back to the upstream on the next round; each round is a governed, recorded call;
 *   the state is refused for another tenant or other arguments;
 * - a 2025 client gets an error result saying the tool needs input (the upstream is told it cannot ask);
 * - a client that closes its request cancels the upstream call;
 * - the upstream's progress and log messages during a call reach the client that asked for them (the official
 *   v2 client at 2026-07-28 with `onprogress` and a log level; the SDK 1.x client at 2025-11-25), in order,
 *   before the result, and the call is governed and recorded once.
 */
import { type ModernUpstream, startModernUpstream } from '@agw/mcp-fixtures';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Tenant, api, newTenant } from './support/api';
import { MCP_2026 as V, MCP_URL as URL_, mcp2026, meta2026 } from './support/mcp-2026';

jest.setTimeout(90_000);

let t: Tenant;
let other: Tenant;
let up: ModernUpstream;

const meta = (caps: Record<string, unknown> = {}) => meta2026('e2e-relay', caps);

/** One 2026-07-28 tools/call over raw HTTP. */
const modern = (params: Record<string, unknown>, o: { key?: string; caps?: Record<string, unknown>; signal?: AbortSignal } = {}) =>
  mcp2026('tools/call', params, { ...o, key: o.key ?? t.apiKey, clientName: 'e2e-relay' });

beforeAll(async () => {
  t = await newTenant('MCP relay');
  other = await newTenant('MCP relay, another tenant');
  up = await startModernUpstream({ port: 0 });
  for (const x of [t, other]) {
    const r = await api('POST', '/upstreams', { key: x.apiKey, body: { name: 'modern', url: `${up.url}/mcp` } });
    expect(r.body.status).toBe('connected');
  }
});
afterAll(() => up?.close());

test('the vault speaks 2026-07-28 to an upstream that offers it', async () => {
  const r = await api('GET', '/upstreams/modern', { key: t.apiKey });
  expect(JSON.stringify(r.body)).toContain('2026-07-28');
});

describe('an upstream’s own input_required, relayed to the official v2 client', () => {
  async function v2Client(answer: { action: 'accept' | 'decline'; content?: Record<string, string | number | boolean | string[]> }) {
    const asked: string[] = [];
    const client = new ClientV2({ name: 'e2e-v2-relay', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: V } } });
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(String((request.params as { message?: string }).message));
      return answer;
    });
    await client.connect(new TransportV2(new URL(URL_), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
    return { client, asked };
  }

  test('the upstream asks, the user confirms, the upstream answers; both rounds are governed and recorded', async () => {
    const before = up.stats().calls.confirm_delete ?? 0;
    const { client, asked } = await v2Client({ action: 'accept', content: { confirm: true } });
    const result = await client.callTool({ name: 'modern__confirm_delete', arguments: { path: '/tmp/report.txt' } });
    expect(asked).toEqual(['Delete /tmp/report.txt?']);
    expect(result.content).toEqual([{ type: 'text', text: 'Deleted /tmp/report.txt' }]);
    expect(up.stats().calls.confirm_delete).toBe(before + 2);
    // the client's declared elicitation reached the upstream (it asks only a client that can answer)
    expect(JSON.stringify(up.stats().lastMeta)).toContain('elicitation');
    const last = (result._meta as Record<string, unknown>)['io.agw/action_id'] as string;
    const log = await api('GET', '/audit/log?limit=10', { key: t.apiKey });
    const rounds = (log.body.records as Array<{ action_id: string; tool: string; method: string; decision: string }>).filter((r) => r.tool === 'modern' && r.method === 'confirm_delete');
    expect(rounds.length).toBeGreaterThanOrEqual(2);
    expect(rounds.map((r) => r.decision)).toEqual(expect.arrayContaining(['allow']));
    expect(rounds.map((r) => r.action_id)).toContain(last);
    await client.close();
  });

  test('declined: the upstream keeps the file', async () => {
    const { client } = await v2Client({ action: 'decline' });
    const result = await client.callTool({ name: 'modern__confirm_delete', arguments: { path: '/tmp/keep.txt' } });
    expect(result.content).toEqual([{ type: 'text', text: 'Kept /tmp/keep.txt' }]);
    await client.close();
  });
});

test('the relayed state is the gateway’s: signed, refused for another tenant and for other arguments', async () => {
  const caps = { elicitation: { form: {} } };
  const first = await modern({ name: 'modern__confirm_delete', arguments: { path: '/tmp/a' } }, { caps });
  expect(first.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { confirm: { method: 'elicitation/create' } } });
  const state = first.body.result.requestState as string;
  expect(state).not.toBe('confirm:/tmp/a');
  const answer = { confirm: { action: 'accept', content: { confirm: true } } };
  const replay = await modern({ name: 'modern__confirm_delete', arguments: { path: '/tmp/a' }, requestState: state, inputResponses: answer }, { key: other.apiKey, caps });
  expect(replay.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/another caller/) });
  const changed = await modern({ name: 'modern__confirm_delete', arguments: { path: '/etc/passwd' }, requestState: state, inputResponses: answer }, { caps });
  expect(changed.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/another call/) });
  const done = await modern({ name: 'modern__confirm_delete', arguments: { path: '/tmp/a' }, requestState: state, inputResponses: answer }, { caps });
  expect(done.body.result.content).toEqual([{ type: 'text', text: 'Deleted /tmp/a' }]);
});

test('a 2025 client gets an error result saying the tool needs input', async () => {
  const client = new Client({ name: 'e2e-legacy-relay', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(URL_), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
  const r = await client.callTool({ name: 'modern__confirm_delete', arguments: { path: '/tmp/b' } });
  expect(r.isError).toBe(true);
  // the vault declared no elicitation for it, so the (conforming) upstream does not ask and says so itself;
  // an upstream that asks anyway is refused by the vault with "needs input … 2026-07-28 only"
  expect(JSON.stringify(r.content)).toMatch(/needs the user to confirm, and the client declared no elicitation|needs input before tool confirm_delete can answer/);
  await client.close();
});

test('a client that closes its request cancels the upstream call', async () => {
  const before = up.stats().cancelled;
  const ctl = new AbortController();
  const call = modern({ name: 'modern__slow', arguments: { ms: 20_000, steps: 40 } }, { signal: ctl.signal }).catch((e: Error) => e);
  await new Promise((r) => setTimeout(r, 1500));
  ctl.abort();
  expect(((await call) as Error).name).toBe('AbortError');
  const until = Date.now() + 10_000;
  while (up.stats().cancelled === before && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  expect(up.stats().cancelled).toBe(before + 1);
  // the call is still governed and recorded: allowed, its execution cancelled (499)
  let rec: { decision: string; details: { execution: Record<string, unknown> } } | undefined;
  for (const until2 = Date.now() + 10_000; !rec && Date.now() < until2; await new Promise((r) => setTimeout(r, 200))) {
    const log = await api('GET', '/audit/log?limit=10', { key: t.apiKey });
    rec = log.body.records.find((x: { tool: string; method: string }) => x.tool === 'modern' && x.method === 'slow');
  }
  expect(rec).toMatchObject({ decision: 'allow', details: { execution: { status_code: 499, outcome: 'cancelled' } } });
});

describe('what the upstream sends during a call reaches the client', () => {
  /** The audit records of one action, once there is one (the audit service writes them from the stream). */
  async function recordsOf(actionId: string) {
    for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
      const log = await api('GET', '/audit/log?limit=50', { key: t.apiKey });
      const mine = (log.body.records as Array<{ action_id: string; decision: string; tool: string; method: string; details: { execution?: Record<string, unknown> } }>).filter((r) => r.action_id === actionId);
      if (mine.length) return mine;
    }
    return [];
  }

  test('the official v2 client (2026-07-28): its onprogress gets the progress in order, its handler the info log messages, then the result; one governed call', async () => {
    const client = new ClientV2({ name: 'e2e-v2-progress', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: V } } });
    const logs: unknown[] = [];
    client.setNotificationHandler('notifications/message', async (n) => void logs.push(n.params));
    await client.connect(new TransportV2(new URL(URL_), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
    const progress: unknown[] = [];
    const before = up.stats().calls.slow ?? 0;
    const result = await client.callTool(
      { name: 'modern__slow', arguments: { ms: 600, steps: 3, log: 'tick' }, _meta: { 'io.modelcontextprotocol/logLevel': 'info' } },
      { onprogress: (p) => void progress.push(p) },
    );
    expect(progress).toEqual([1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i} of 3` })));
    // the info messages only: the upstream's debug "starting" is below the level the request asked for
    expect(logs).toEqual([1, 2, 3].map((i) => ({ level: 'info', logger: 'slow', data: `tick ${i}` })));
    expect(result.content).toEqual([{ type: 'text', text: 'waited 600 ms' }]);
    expect(up.stats().calls.slow).toBe(before + 1);
    const actionId = (result._meta as Record<string, unknown>)['io.agw/action_id'] as string;
    const records = await recordsOf(actionId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ decision: 'allow', tool: 'modern', method: 'slow', details: { execution: { status_code: 200 } } });
    await client.close();
  });

  test('the SDK 1.x client (2025-11-25): progress with its own token, and every log level (no level is kept by a stateless server)', async () => {
    const client = new Client({ name: 'e2e-legacy-progress', version: '1.0.0' });
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => void logs.push(n.params));
    await client.connect(new StreamableHTTPClientTransport(new URL(URL_), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
    const progress: unknown[] = [];
    const result = await client.callTool({ name: 'modern__slow', arguments: { ms: 400, steps: 2, log: 'tock' } }, undefined, { onprogress: (p) => void progress.push(p) });
    expect(progress).toEqual([1, 2].map((i) => ({ progress: i, total: 2, message: `step ${i} of 2` })));
    expect(logs).toEqual([{ level: 'debug', logger: 'slow', data: 'starting' }, ...[1, 2].map((i) => ({ level: 'info', logger: 'slow', data: `tock ${i}` }))]);
    expect(result.content).toEqual([{ type: 'text', text: 'waited 400 ms' }]);
    const records = await recordsOf((result._meta as Record<string, unknown>)['io.agw/action_id'] as string);
    expect(records).toHaveLength(1);
    await client.close();
  });

  test('a client that closes its streamed call after the first progress cancels the upstream call; recorded once as cancelled', async () => {
    const cancelledRecords = async () => {
      const log = await api('GET', '/audit/log?limit=50', { key: t.apiKey });
      return (log.body.records as Array<{ tool: string; method: string; decision: string; details: { execution?: Record<string, unknown> } }>).filter((x) => x.tool === 'modern' && x.method === 'slow' && x.details.execution?.status_code === 499);
    };
    const recordsBefore = (await cancelledRecords()).length;
    const before = up.stats().cancelled;
    const ctl = new AbortController();
    const res = await fetch(URL_, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'modern__slow' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'modern__slow', arguments: { ms: 40_000, steps: 200 }, _meta: { ...meta(), progressToken: 'c-1' } } }),
      signal: ctl.signal,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    const first = JSON.parse(text.split('\n').find((l) => l.startsWith('data: '))!.slice(6));
    expect(first).toMatchObject({ method: 'notifications/progress', params: { progressToken: 'c-1', progress: 1, total: 200 } });
    ctl.abort();
    await reader.cancel().catch(() => undefined);
    for (const end = Date.now() + 10_000; up.stats().cancelled === before && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
    expect(up.stats().cancelled).toBe(before + 1);
    let rec = await cancelledRecords();
    for (const end = Date.now() + 15_000; rec.length === recordsBefore && Date.now() < end; await new Promise((r) => setTimeout(r, 200))) rec = await cancelledRecords();
    expect(rec).toHaveLength(recordsBefore + 1);
    // the newest first
    expect(rec[0]).toMatchObject({ decision: 'allow', details: { execution: { status_code: 499, outcome: 'cancelled' } } });
  });

  test('a call that asks for nothing is answered with JSON, as before', async () => {
    const r = await modern({ name: 'modern__slow', arguments: { ms: 100, steps: 2, log: 'quiet' } });
    expect(r.status).toBe(200);
    expect(r.body.result.content).toEqual([{ type: 'text', text: 'waited 100 ms' }]);
  });
});
