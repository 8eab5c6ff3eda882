/** The fixtures' small HTTP helpers: a JSON answer, and a request's body as text or as JSON. */
import type { IncomingMessage, ServerResponse } from 'node:http';

export function json(res: ServerResponse, status: number, v: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
}

export function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readText(req);
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return {};
  }
}
