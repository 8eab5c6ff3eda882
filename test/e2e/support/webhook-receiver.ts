/**
 * An HTTPS webhook receiver in the test process that the e2e webhook service trusts (its certificate is made
 * for this run: webhook-receiver-cert.ts): it keeps every delivery's headers and JSON body and answers 200.
 */
import type http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { trustedReceiverCert } from './webhook-receiver-cert';

export interface WebhookReceiver {
  /** the URL to register as a tenant's webhook */
  url: string;
  /** every delivery, in arrival order */
  got: Array<{ headers: http.IncomingHttpHeaders; json: any }>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const got: WebhookReceiver['got'] = [];
  const server = https.createServer(trustedReceiverCert(), (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      got.push({ headers: req.headers, json: JSON.parse(body) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as net.AddressInfo).port}/hooks`,
    got,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
