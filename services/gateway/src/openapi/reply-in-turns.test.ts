import type { AddressInfo } from 'node:net';
import express from 'express';
import { z } from 'zod';
import { reply, replyInTurns } from './schema';

const schema = z.object({ name: z.string(), tools: z.array(z.object({ n: z.number(), text: z.string() })).optional(), note: z.string().nullable() });
const tools = [1, 2, 3].map((n) => ({ n, text: `"tool" ${n} ✓ \u2028` }));
const head = { name: 'docs "upstream"', tools: [], note: '"tools":[' };

async function serve(app: express.Express): Promise<{ url: string; close: () => void }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

describe('replyInTurns', () => {
  it('writes what reply writes, keys in the same order, one item per turn', async () => {
    const turns: string[] = [];
    const app = express();
    app.get('/whole', (_req, res) => reply(res, schema, { ...head, tools }));
    app.get('/turns', async (_req, res) => {
      await replyInTurns(res, schema, head, 'tools', tools, (t) => {
        turns.push(`present ${t.n}`);
        setImmediate(() => turns.push(`other work after ${t.n}`));
        return t;
      }, 201);
    });
    const s = await serve(app);
    try {
      const whole = await fetch(`${s.url}/whole`);
      const inTurns = await fetch(`${s.url}/turns`);
      expect(inTurns.status).toBe(201);
      expect(inTurns.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await inTurns.text()).toBe(await whole.text());
      expect(turns.indexOf('other work after 1')).toBeLessThan(turns.indexOf('present 2'));
      expect(turns.indexOf('other work after 2')).toBeLessThan(turns.indexOf('present 3'));
    } finally {
      s.close();
    }
  });

  it('an item that cannot be presented is the answer’s error, before a byte is written', async () => {
    const app = express();
    app.get('/broken', async (_req, res, next) => {
      try {
        await replyInTurns(res, schema, head, 'tools', tools, (t) => {
          if (t.n === 3) throw new Error('the peer answered malformed JSON');
          return t;
        });
      } catch (e) {
        expect(res.headersSent).toBe(false);
        next(e);
      }
    });
    app.use((_e: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(500).json({ detail: 'internal' }));
    const s = await serve(app);
    try {
      const r = await fetch(`${s.url}/broken`);
      expect(r.status).toBe(500);
      expect(await r.json()).toEqual({ detail: 'internal' });
    } finally {
      s.close();
    }
  });

  it('an empty list is an empty array', async () => {
    const app = express();
    app.get('/none', async (_req, res) => replyInTurns(res, schema, head, 'tools', [] as typeof tools, (t) => t));
    const s = await serve(app);
    try {
      expect(await (await fetch(`${s.url}/none`)).json()).toEqual({ ...head, tools: [] });
    } finally {
      s.close();
    }
  });
});
