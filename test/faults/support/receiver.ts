/**
 * A local HTTPS webhook receiver with a self-signed certificate made for the run; the fleet's webhook
 * service trusts it through WEBHOOK_CA_FILE and may reach loopback through WEBHOOK_ALLOW_CIDRS (as in
 * test/e2e/webhook-delivery.e2e.test.ts). It keeps every request, verifies the signature, and counts
 * deliveries once per X-Service-Delivery (the id of the event's delivery, as docs/webhooks.md advises).
 * Under `/siem` it is a SIEM collector instead (the SIEM export's JSON Lines of OCSF events, docs/evidence.md):
 * it keeps each event's action id (`metadata.correlation_uid`) and whether its request was signed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type SelfSignedCert, selfSignedCert } from '@agw/shared';
import { WEBHOOK_CA_FILE } from './env';

export interface Received {
  at: number;
  deliveryId: string;
  attempt: number;
  event: string;
  actionId: string;
  agentId: string;
  answered: number;
  signed: boolean;
}

let cert: SelfSignedCert | undefined;

/** Make the run's certificate and write it where the fleet's webhook service reads its extra CA (before the fleet starts). */
export function writeReceiverCa(): void {
  cert = selfSignedCert({ commonName: 'agw-faults-webhook-receiver', altNames: ['DNS:localhost', 'DNS:*.faults.test', 'IP:127.0.0.1', 'IP:127.0.0.2', 'IP:::1'] });
  mkdirSync(path.dirname(WEBHOOK_CA_FILE), { recursive: true });
  writeFileSync(WEBHOOK_CA_FILE, cert.cert);
}

export class Receiver {
  readonly got: Received[] = [];
  /** OCSF events received under /siem: one entry per event per request (at least once: an event may repeat) */
  readonly siem: Array<{ actionId: string; signed: boolean }> = [];
  secret = '';
  url = '';
  private server?: https.Server;

  /** `answer(agentId, attempt)`: the status to give (default 200). */
  port = 0;
  /** the Location of a 3xx answer */
  location = '';
  /** connections accepted (a target the fleet must never reach counts them) */
  connections = 0;

  constructor(
    private readonly answer: (agentId: string, attempt: number) => number = () => 200,
    private readonly host = '127.0.0.1',
  ) {}

  async start(port = 0): Promise<this> {
    if (!cert) throw new Error('writeReceiverCa() first');
    this.server = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      const at = Date.now();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        let json: any = {};
        try {
          json = JSON.parse(raw.toString());
        } catch {
          /* counted as unsigned below */
        }
        const header = String(req.headers['x-service-signature'] ?? '');
        const expected = Buffer.from(`sha256=${createHmac('sha256', this.secret).update(raw).digest('hex')}`);
        const signed = header.length === expected.length && timingSafeEqual(Buffer.from(header), expected);
        if ((req.url ?? '').startsWith('/siem')) {
          for (const line of raw.toString('utf8').split('\n').filter(Boolean)) this.siem.push({ actionId: String(JSON.parse(line).metadata?.correlation_uid ?? ''), signed });
          res.writeHead(200).end();
          return;
        }
        const attempt = Number(req.headers['x-service-attempt'] ?? 0);
        const agentId = String(json.data?.agent_id ?? '');
        const answered = this.answer(agentId, attempt);
        this.got.push({ at, deliveryId: String(req.headers['x-service-delivery'] ?? ''), attempt, event: String(json.event ?? ''), actionId: String(json.data?.action_id ?? ''), agentId, answered, signed });
        res.writeHead(answered, answered >= 300 && answered < 400 && this.location ? { location: this.location } : {}).end();
      });
    });
    this.server.on('connection', () => this.connections++);
    await new Promise<void>((r) => this.server!.listen(port, this.host, r));
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `https://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}/hooks/agw`;
    return this;
  }

  /** Successful receipts per action id, deduplicated by delivery id (what a deduplicating receiver processes). */
  processed(): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const g of this.got) if (g.answered < 300 && g.signed) out.set(g.actionId, (out.get(g.actionId) ?? new Set()).add(g.deliveryId));
    return out;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((r) => this.server!.close(r));
  }
}
