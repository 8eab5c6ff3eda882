/**
 * The anchor service's own definition (anchor.service.ts, as main.ts runs it) started in this process against
 * the real Postgres and NATS, with its embedded chain: a fresh anvil node (no state file) on a free port, no
 * anchoring schedule (a test runs the batcher). Tests name what they put in place (`overrides`: the audit
 * service's tree heads) and the settings they need (`env`).
 */
import { type StartedService, type TestServiceOptions, freeLoopbackPort, startTestService } from '@agw/shared';
import { type AnchorApi, type AnchorOverrides, anchorService } from '../../src/anchor.service';
import type { AnchorConfig } from '../../src/config';

/** The started service and the RPC URL of its chain. */
export type StartedAnchor = StartedService<AnchorConfig, AnchorApi> & { rpcUrl: string };

export async function startAnchor(o: TestServiceOptions<AnchorConfig, AnchorOverrides> = {}): Promise<StartedAnchor> {
  const started = await startTestService(anchorService(), {
    ...o,
    env: {
      AGW_PROFILE: 'local',
      ANCHOR_RPC_URL: undefined,
      ANCHOR_ANVIL_HOST: '127.0.0.1',
      // a port the OS just handed out (a fixed one could be a running fleet's)
      ANCHOR_ANVIL_PORT: String(await freeLoopbackPort()),
      ANCHOR_ANVIL_STATE_FILE: 'none',
      ANCHOR_SCHEDULE_ENABLED: 'false',
      ...o.env,
    },
  });
  return { ...started, rpcUrl: started.config.rpcUrl ?? `http://${started.config.anvilHost}:${started.config.anvilPort}` };
}
