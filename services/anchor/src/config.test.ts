/** Anchor settings: defaults run the embedded chain; a malformed key is refused without echoing it. */
import { ConfigError } from '@agw/shared';
import { loadAnchorConfig } from './config';

describe('anchor config', () => {
  it('defaults to the embedded chain on the documented ports', () => {
    const c = loadAnchorConfig({});
    expect(c).toMatchObject({ grpcPort: 50055, opsPort: 9085, anvilPort: 8545, chain: 'polygon', scheduleEnabled: true });
    expect(c.rpcUrl).toBeUndefined();
    expect(c.privateKey).toBeUndefined();
  });

  it('accepts an RPC URL with a chain and key, and rejects a malformed key without printing it', () => {
    const key = `0x${'1f'.repeat(32)}`;
    expect(loadAnchorConfig({ ANCHOR_RPC_URL: 'https://rpc-amoy.polygon.technology', ANCHOR_CHAIN: 'polygon-amoy', ANCHOR_PRIVATE_KEY: key })).toMatchObject({ chain: 'polygon-amoy', privateKey: key });
    const secret = 'not-a-key-but-still-a-secret';
    let error: unknown;
    try {
      loadAnchorConfig({ ANCHOR_PRIVATE_KEY: secret });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as Error).message)).toContain('ANCHOR_PRIVATE_KEY');
    expect(String((error as Error).message)).not.toContain(secret);
    expect(() => loadAnchorConfig({ ANCHOR_CHAIN: 'ethereum' })).toThrow(ConfigError);
  });
});
