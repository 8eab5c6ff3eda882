/**
 * A TCP proxy on loopback in front of the test Postgres that a test can cut: `cut()` resets every connection
 * open through it (as a network reset does), and the next connection goes through again.
 */
import net from 'node:net';

export interface PostgresProxy {
  /** the database URL through the proxy */
  url: string;
  /** reset every connection open through the proxy */
  cut(): void;
  close(): void;
}

export async function postgresProxy(target: URL): Promise<PostgresProxy> {
  const open = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      open.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
      a.pipe(b);
    }
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const url = new URL(target.toString());
  url.hostname = '127.0.0.1';
  url.port = String((proxy.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    cut: () => {
      for (const s of open) s.resetAndDestroy();
    },
    close: () => proxy.close(),
  };
}
