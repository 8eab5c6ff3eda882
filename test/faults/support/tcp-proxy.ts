/**
 * A TCP proxy the suite owns in front of a store (Postgres, NATS): the fleet connects through it, and
 * `cut(ms)` drops every open connection at once and refuses new ones (the listener is closed) for `ms`,
 * without touching the store itself, which other fleets on the machine share.
 */
import net from 'node:net';

export class TcpProxy {
  private server: net.Server | null = null;
  private readonly open = new Set<net.Socket>();
  /** connections accepted, connections dropped by cut() */
  accepted = 0;
  dropped = 0;

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  async start(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      this.accepted++;
      const upstream = net.connect(this.target);
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.open.add(a);
        a.setNoDelay(true);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          this.open.delete(a);
          b.destroy();
        });
        a.pipe(b);
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /** Drop every connection (RST) and refuse new ones for `ms`; resolves once the proxy accepts again. */
  async cut(ms: number): Promise<void> {
    const server = this.server;
    this.server = null;
    const closed = server ? new Promise((r) => server.close(r)) : Promise.resolve();
    const clients = [...this.open];
    this.dropped += clients.length / 2;
    for (const s of clients) s.resetAndDestroy();
    await closed;
    await new Promise((r) => setTimeout(r, ms));
    await this.start();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of [...this.open]) s.destroy();
    if (server) await new Promise((r) => server.close(r));
  }
}
