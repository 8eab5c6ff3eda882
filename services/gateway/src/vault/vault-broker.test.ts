import { status } from '@grpc/grpc-js';
import type { vault } from '@agw/proto';
import { AppError } from '@agw/shared';
import type { VaultClient } from '../clients/grpc-clients';
import type { UpstreamNotification } from '../pipeline/hooks';
import { createVaultBroker } from './vault-broker';

const answer: vault.ExecuteResponse = { brokered: true, status_code: 200, body: { text: '{"content":[]}' }, body_json: '{"content":[]}', hsm_fetch_ms: 0, execution_ms: 5, credential_name: 'upstream:up', outcome: 'executed', mcp_result: true };
const call = (notifications?: { progress: boolean; logLevel?: string; send(n: UpstreamNotification): void }) => ({
  tool: 'up',
  method: 'slow',
  params: {},
  agent_id: 'mcp-client',
  agent_type: 'mcp',
  agent_version: '1.0.0',
  origin: 'tool_call' as const,
  ...(notifications ? { upstreamRound: { notifications } } : {}),
});

describe('the vault broker: a call that wants its upstream’s notifications', () => {
  test('runs on ExecuteStream: each event to the client as it comes, the last one is the execution', async () => {
    const used: string[] = [];
    const sent: UpstreamNotification[] = [];
    const client = {
      execute: async () => (used.push('execute'), answer),
      executeStream: async (req: vault.ExecuteRequest, o: { onMessage(e: vault.ExecuteEvent): void }) => {
        used.push(`stream ${req.relay_progress} ${req.relay_log_level}`);
        const events: vault.ExecuteEvent[] = [{ progress: { progress: 1, total: 2 } }, { log: { level: 'info', logger: 'slow', data: { text: '{"a":1}' }, data_json: '{"a":1}' } }, { response: answer }];
        for (const e of events) o.onMessage(e);
        return events[events.length - 1];
      },
    } as unknown as VaultClient;
    const r = await createVaultBroker(client).execute('t1', 'a1', call({ progress: true, logLevel: 'info', send: (n) => sent.push(n) }) as never);
    expect(used).toEqual(['stream true info']);
    expect(sent).toEqual([
      { kind: 'progress', progress: 1, total: 2 },
      { kind: 'log', level: 'info', logger: 'slow', data: { a: 1 } },
    ]);
    expect(r).toMatchObject({ status_code: 200, outcome: 'executed', body: { content: [] } });
  });

  test('a vault without ExecuteStream (UNIMPLEMENTED, a rolling update): the unary Execute, as before', async () => {
    const used: string[] = [];
    const client = {
      execute: async () => (used.push('execute'), answer),
      executeStream: async () => {
        used.push('stream');
        throw new AppError('internal', 'vault service failed', undefined, { cause: Object.assign(new Error('unimplemented'), { code: status.UNIMPLEMENTED }) });
      },
    } as unknown as VaultClient;
    const r = await createVaultBroker(client).execute('t1', 'a1', call({ progress: true, send: () => undefined }) as never);
    expect(used).toEqual(['stream', 'execute']);
    expect(r).toMatchObject({ status_code: 200, outcome: 'executed' });
  });

  test('a call that wants nothing: the unary Execute', async () => {
    const used: string[] = [];
    const client = { execute: async () => (used.push('execute'), answer), executeStream: async () => (used.push('stream'), { response: answer }) } as unknown as VaultClient;
    await createVaultBroker(client).execute('t1', 'a1', call() as never);
    expect(used).toEqual(['execute']);
  });
});
