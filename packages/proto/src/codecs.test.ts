import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { EncodedMessage, MAX_KEPT_WRITER_BYTES, encodeInTurns, encodeToBuffer, withReusedWriter } from './codecs';
import * as proto from './index';

type Method = MethodDefinition<unknown, unknown>;

/** every grpc-js service definition of the contracts (`XServiceService`), by name */
const grpcServices: [string, ServiceDefinition][] = Object.values(proto as unknown as Record<string, Record<string, unknown>>).flatMap((mod) =>
  Object.entries(mod ?? {}).filter(([name, v]) => name.endsWith('Service') && typeof v === 'object' && v !== null && Object.values(v).every((m) => typeof (m as Method).path === 'string')) as [
    string,
    ServiceDefinition,
  ][],
);

const call = { agent_id: 'load-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { text: '{"q":"bénchmark ✓","page":1}' }, params_json: '{"q":"bénchmark ✓","page":1}', pii_detected: false, session_id: '' };
const evaluateCall = { call_id: 7, request: proto.policy.EvaluateRequest.fromPartial({ tenant_id: 't-1', action_id: 'a-1', call }), metadata: { traceparent: '00-abc' } };
const appendCall = {
  call_id: 8,
  request: proto.audit.AppendRequest.fromPartial({
    tenant_id: 't-1',
    entry: proto.audit.AuditEntry.fromPartial({ action_id: 'a-1', agent_id: call.agent_id, agent_type: call.agent_type, agent_version: call.agent_version, tool: call.tool, method: call.method, params: call.params, params_json: call.params_json, decision: 'allow', severity: 'none', source: 'api', details: { text: '{}' }, details_json: '{}', requested_at: '2026-11-28T00:00:00.000Z' }),
    event_kind: 'allowed',
    omit_entry: true,
    append_key: 'k-1',
  }),
  metadata: {},
};
const big = { ...appendCall, request: { ...appendCall.request, entry: { ...appendCall.request.entry!, params: { text: JSON.stringify({ blob: 'x'.repeat(MAX_KEPT_WRITER_BYTES * 2) }) } } } };

describe('withReusedWriter', () => {
  it('covers every method of every contract', () => {
    expect(grpcServices.length).toBeGreaterThanOrEqual(10);
    for (const [name, def] of grpcServices) {
      const fast = withReusedWriter(def);
      for (const key of Object.keys(def)) {
        expect([name, key, fast[key].requestSerialize !== def[key].requestSerialize]).toEqual([name, key, true]);
        expect([name, key, fast[key].responseSerialize !== def[key].responseSerialize]).toEqual([name, key, true]);
        expect(fast[key].requestDeserialize).toBe(def[key].requestDeserialize);
        expect(fast[key].path).toBe(def[key].path);
      }
      expect(withReusedWriter(def)).toBe(fast);
    }
  });

  it('gives the generated serializers’ bytes for every method (empty messages)', () => {
    for (const [, def] of grpcServices) {
      const fast = withReusedWriter(def);
      for (const key of Object.keys(def)) {
        const req = def[key].requestDeserialize(Buffer.alloc(0));
        const res = def[key].responseDeserialize(Buffer.alloc(0));
        expect(fast[key].requestSerialize(req)).toEqual(def[key].requestSerialize(req));
        expect(fast[key].responseSerialize(res)).toEqual(def[key].responseSerialize(res));
      }
    }
  });

  it('gives the same bytes for the hot path’s messages, one after another, around a large one', () => {
    const policy = proto.policy.PolicyServiceService.evaluateStream;
    const audit = proto.audit.AuditServiceService.appendStream;
    const fastPolicy = withReusedWriter(proto.policy.PolicyServiceService).evaluateStream;
    const fastAudit = withReusedWriter(proto.audit.AuditServiceService).appendStream;
    const outs: Buffer[] = [];
    for (const m of [evaluateCall, appendCall, big, evaluateCall, appendCall]) {
      const [gen, fast] = 'request' in m && m.request && 'entry' in m.request ? [audit, fastAudit] : [policy, fastPolicy];
      const bytes = fast.requestSerialize(m as never);
      expect(bytes).toEqual(gen.requestSerialize(m as never));
      expect(gen.requestDeserialize(bytes)).toEqual(gen.requestDeserialize(gen.requestSerialize(m as never)));
      outs.push(bytes);
    }
    // each answer owns its bytes: a later encode does not overwrite an earlier one
    expect(outs[0]).toEqual(policy.requestSerialize(evaluateCall as never));
    expect(outs[1]).toEqual(audit.requestSerialize(appendCall as never));
    expect(outs[0].buffer).not.toBe(outs[3].buffer);
  });

  it('recovers from an encode that throws: the next message is whole', () => {
    const type = proto.audit.AppendCall;
    // `passes` is an int32 inside the request's decision facts: the writer has forked twice when it throws
    const broken = { ...appendCall, request: { ...appendCall.request, decision_facts: proto.decision.DecisionFacts.fromPartial({ decision: 'allow', passes: 1.5 }) } };
    expect(() => encodeToBuffer(type, broken as never)).toThrow(/int32/);
    expect(encodeToBuffer(type, appendCall as never)).toEqual(Buffer.from(type.encode(appendCall as never).finish()));
  });
});

describe('encodeInTurns', () => {
  const tool = (i: number) => proto.federation.UpstreamTool.fromPartial({ upstream: 'docs', name: `t${i}`, state: 'quarantined', pinned: { text: JSON.stringify({ description: `é ${'x'.repeat(i * 100)}` }) }, markers: [{ rule: 'r', path: '/description', excerpt: 'x' }] });
  const upstream = proto.federation.Upstream.fromPartial({ name: 'docs', url: 'https://docs.example/mcp', tool_count: 3, timeout_ms: 5000, connection: 'shared', tools: [tool(1), tool(2), tool(3)] });

  it('decodes to the message a single encode gives, tools in their order', async () => {
    const encoded = await encodeInTurns(proto.federation.Upstream, { ...upstream, tools: [] }, 'tools', [1, 2, 3], tool);
    expect(encoded).toBeInstanceOf(EncodedMessage);
    expect(proto.federation.Upstream.decode(encoded.bytes)).toEqual(proto.federation.Upstream.decode(proto.federation.Upstream.encode(upstream).finish()));
    const none = await encodeInTurns(proto.federation.ListUpstreamToolsResponse, { tools: [] }, 'tools', [] as number[], tool);
    expect(proto.federation.ListUpstreamToolsResponse.decode(none.bytes)).toEqual({ tools: [] });
  });

  it('lets the event loop run between items', async () => {
    const order: string[] = [];
    const pending = encodeInTurns(proto.federation.ListUpstreamToolsResponse, { tools: [] }, 'tools', [1, 2, 3], (i) => {
      order.push(`item ${i}`);
      setImmediate(() => order.push(`other work after ${i}`));
      return tool(i);
    });
    await pending;
    expect(order.indexOf('other work after 1')).toBeLessThan(order.indexOf('item 2'));
    expect(order.indexOf('other work after 2')).toBeLessThan(order.indexOf('item 3'));
    expect(order.slice(0, 5)).toEqual(['item 1', 'other work after 1', 'item 2', 'other work after 2', 'item 3']);
  });

  it('is sent as it is by the response serializers', async () => {
    const method = withReusedWriter(proto.federation.FederationServiceService).refreshUpstream;
    const encoded = await encodeInTurns(proto.federation.Upstream, { ...upstream, tools: [] }, 'tools', [1, 2, 3], tool);
    expect(method.responseSerialize(encoded as never)).toBe(encoded.bytes);
    expect(method.responseDeserialize(method.responseSerialize(encoded as never))).toEqual(method.responseDeserialize(method.responseSerialize(upstream as never)));
  });
});
