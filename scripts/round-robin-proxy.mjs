// The local stand-in of a load balancer in front of several gateways (scripts/fleet.mjs at AGW_REPLICAS > 1),
// with Node's own http module: each request goes to the next gateway in turn. A gateway that refuses the
// connection (stopped, killed, restarting) has received nothing, so the request is sent to the next one and
// that gateway is skipped for a second; any later failure (the gateway died while handling it) is a 502,
// never a retry, because the request may have taken effect. Request bodies are buffered (at most 32 MB;
// the gateway itself takes 1 MB) so a refused request can be sent again; responses are streamed (SSE).
// In Kubernetes the Service/Ingress does this job (docs/operations.md).
import http from 'node:http';

const MAX_BODY = 32 * 1024 * 1024;
const SKIP_MS = 1000;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

/** @param {{ port: number, host?: string, upstreams: { host: string, port: number }[] }} o */
export function roundRobinProxy(o) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const downUntil = new Map();
  let next = 0;

  const pickOrder = () => {
    const n = o.upstreams.length;
    const start = next++ % n;
    const order = Array.from({ length: n }, (_, i) => o.upstreams[(start + i) % n]);
    const now = Date.now();
    // healthy ones first, the recently refusing ones last (they are still tried when nothing else is left)
    return [...order.filter((u) => (downUntil.get(u.port) ?? 0) <= now), ...order.filter((u) => (downUntil.get(u.port) ?? 0) > now)];
  };

  const server = http.createServer((req, res) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        res.writeHead(413, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'Request body too large' }));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      const body = Buffer.concat(chunks);
      const headers = {};
      for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k)) headers[k] = v;
      headers['content-length'] = String(body.length);
      const prior = req.headers['x-forwarded-for'];
      headers['x-forwarded-for'] = prior ? `${prior}, ${req.socket.remoteAddress}` : req.socket.remoteAddress;
      headers['x-forwarded-host'] ??= req.headers.host ?? '';
      headers['x-forwarded-proto'] ??= 'http';
      const targets = pickOrder();
      const attempt = (i) => {
        const u = targets[i];
        const up = http.request({ host: u.host, port: u.port, method: req.method, path: req.url, headers, agent }, (ur) => {
          const out = {};
          for (const [k, v] of Object.entries(ur.headers)) if (!HOP_BY_HOP.has(k)) out[k] = v;
          res.writeHead(ur.statusCode ?? 502, out);
          ur.pipe(res);
          res.on('close', () => ur.destroy());
        });
        up.on('error', (e) => {
          if (e.code === 'ECONNREFUSED') {
            downUntil.set(u.port, Date.now() + SKIP_MS);
            if (i + 1 < targets.length) return attempt(i + 1);
          }
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: `No gateway answered (${e.code ?? e.message})` }));
          else res.destroy();
        });
        up.end(body);
      };
      attempt(0);
    });
  });
  server.keepAliveTimeout = 65_000;
  const listening = new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '127.0.0.1', resolve);
  });
  return {
    listening,
    close: () => {
      server.close();
      server.closeAllConnections?.();
      agent.destroy();
    },
  };
}
