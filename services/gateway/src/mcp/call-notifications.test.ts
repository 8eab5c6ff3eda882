import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { type ClientNotification, LazySseAnswer, notificationsFor, relayWishOf } from './call-notifications';

describe('relayWishOf: what a tools/call asks to be relayed', () => {
  const call = (meta: Record<string, unknown>) => ({ name: 't', arguments: {}, _meta: meta });

  test('a progressToken asks for progress; an earlier revision gets every log level with it', () => {
    expect(relayWishOf('tools/call', call({ progressToken: 7 }), false)).toEqual({ progressToken: 7, logLevel: 'debug' });
    expect(relayWishOf('tools/call', call({ progressToken: 'p-1' }), true)).toEqual({ progressToken: 'p-1' });
  });

  test('2026-07-28: the log level of the request, without progress too; an unknown level asks nothing', () => {
    expect(relayWishOf('tools/call', call({ 'io.modelcontextprotocol/logLevel': 'warning' }), true)).toEqual({ logLevel: 'warning' });
    expect(relayWishOf('tools/call', call({ 'io.modelcontextprotocol/logLevel': 'loud' }), true)).toBeUndefined();
    // an earlier revision asks for log messages with logging/setLevel, which a stateless server does not keep
    expect(relayWishOf('tools/call', call({ 'io.modelcontextprotocol/logLevel': 'info' }), false)).toBeUndefined();
  });

  test('nothing asked, another method, or a token that is no token: undefined (the call runs as before)', () => {
    expect(relayWishOf('tools/call', { name: 't' }, true)).toBeUndefined();
    expect(relayWishOf('tools/list', call({ progressToken: 1 }), false)).toBeUndefined();
    expect(relayWishOf('tools/call', call({ progressToken: { x: 1 } }), false)).toBeUndefined();
  });
});

describe('notificationsFor: the upstream’s notifications as the client’s', () => {
  test('progress carries the client’s token; a log message its level, logger and data', () => {
    const sent: ClientNotification[] = [];
    const n = notificationsFor({ progressToken: 'mine', logLevel: 'info' }, (x) => sent.push(x));
    expect(n).toMatchObject({ progress: true, logLevel: 'info' });
    n.send({ kind: 'progress', progress: 1, total: 2, message: 'half' });
    n.send({ kind: 'log', level: 'info', logger: 'slow', data: { a: 1 } });
    expect(sent).toEqual([
      { method: 'notifications/progress', params: { progressToken: 'mine', progress: 1, total: 2, message: 'half' } },
      { method: 'notifications/message', params: { level: 'info', logger: 'slow', data: { a: 1 } } },
    ]);
  });

  test('no token: no progress goes out', () => {
    const sent: ClientNotification[] = [];
    const n = notificationsFor({ logLevel: 'debug' }, (x) => sent.push(x));
    expect(n.progress).toBe(false);
    n.send({ kind: 'progress', progress: 1 });
    expect(sent).toEqual([]);
  });
});

describe('LazySseAnswer', () => {
  async function serve(fn: (a: LazySseAnswer) => void) {
    const app = express();
    app.post('/', (_req, res) => fn(new LazySseAnswer(res)));
    const srv = http.createServer(app);
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/`, { method: 'POST' });
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    } finally {
      srv.close();
    }
  }

  test('no notification: one JSON answer, as before', async () => {
    const r = await serve((a) => a.finish(200, { jsonrpc: '2.0', id: 1, result: {} }));
    expect(r).toMatchObject({ status: 200, type: expect.stringContaining('application/json') });
    expect(JSON.parse(r.text)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  test('a notification turns it into an SSE stream: the notifications, then the answer', async () => {
    const r = await serve((a) => {
      a.notify({ method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
      a.finish(200, { jsonrpc: '2.0', id: 1, result: {} });
    });
    expect(r).toMatchObject({ status: 200, type: expect.stringContaining('text/event-stream') });
    const data = r.text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.split('\n').find((l) => l.startsWith('data: '))!.slice(6)));
    expect(data).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
      { jsonrpc: '2.0', id: 1, result: {} },
    ]);
  });
});
