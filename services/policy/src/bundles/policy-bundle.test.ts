import { compileCustom, customBundle } from './policy-bundle';

const noErr = (e: unknown) => {
  throw e;
};
const run = (source: string, input: Record<string, unknown>, config: Record<string, unknown> = {}) =>
  customBundle(compileCustom(source), source, config, noErr).evaluate({ method: 'm', params: {}, ...input }, 0n);

describe('custom policy contract', () => {
  test('sets of free-text messages: deny (high), warn (medium), approval', () => {
    const src = 'package agw.custom\nimport rego.v1\ndeny contains "no" if input.method == "x"\nwarn contains "hmm" if input.method == "y"\napproval contains "ask" if input.method == "z"\n';
    expect(run(src, { method: 'x' })).toMatchObject({ decision: 'deny', violations: ['no'], severity: 'high' });
    expect(run(src, { method: 'y' })).toMatchObject({ decision: 'allow', violations: ['hmm'], severity: 'medium' });
    expect(run(src, { method: 'z' })).toMatchObject({ decision: 'requires_human', violations: ['ask'] });
    expect(run(src, { method: 'w' })).toMatchObject({ decision: 'allow', violations: [] });
  });
  test('objects with their own severity; a decision object', () => {
    const src = 'package agw.custom\nimport rego.v1\nviolations contains {"msg": "odd", "severity": "low"} if true\n';
    expect(run(src, {})).toMatchObject({ decision: 'allow', violations: ['odd'], severity: 'low' });
    const d = 'package agw.custom\nimport rego.v1\ndecision := {"violations": ["bad"], "severity": "critical"}\n';
    expect(run(d, {})).toMatchObject({ decision: 'deny', severity: 'critical', alertTier: 'P1' });
  });
  test('boolean rules and OPA-style allow', () => {
    expect(run('package agw.custom\nimport rego.v1\ndeny if input.method == "x"\n', { method: 'x' })).toMatchObject({ decision: 'deny', violations: ['custom_policy_denied'] });
    const allow = 'package agw.custom\nimport rego.v1\ndefault allow := false\nallow if input.method == "read"\n';
    expect(run(allow, { method: 'read' }).decision).toBe('allow');
    expect(run(allow, { method: 'write' })).toMatchObject({ decision: 'deny', violations: ['custom_policy_not_allowed'] });
    expect(run('package agw.custom\nimport rego.v1\nrequires_human if input.method == "x"\n', { method: 'x' }).decision).toBe('requires_human');
  });
  test('four eyes: an approval reason object, a decision object or a top-level rule asks for n distinct approvers (the largest wins; not a number 1-10: ignored)', () => {
    const obj = 'package agw.custom\nimport rego.v1\napproval contains {"id": "large_transfer", "required_approvers": 2} if input.params.amount > 10000\napproval contains "odd_hour" if input.method == "night"\n';
    expect(run(obj, { params: { amount: 20000 } })).toMatchObject({ decision: 'requires_human', violations: ['large_transfer'], requiredApprovers: 2 });
    expect(run(obj, { method: 'night', params: {} })).toMatchObject({ decision: 'requires_human', requiredApprovers: 0 });
    const top = 'package agw.custom\nimport rego.v1\napproval contains "big" if input.params.amount > 10\nrequired_approvers := 3 if input.params.amount > 1000\n';
    expect(run(top, { params: { amount: 5000 } })).toMatchObject({ decision: 'requires_human', requiredApprovers: 3 });
    expect(run(top, { params: { amount: 50 } })).toMatchObject({ decision: 'requires_human', requiredApprovers: 0 });
    const dec = 'package agw.custom\nimport rego.v1\ndecision := {"requires_human": true, "required_approvers": 2}\n';
    expect(run(dec, {})).toMatchObject({ decision: 'requires_human', requiredApprovers: 2 });
    expect(run('package agw.custom\nimport rego.v1\ndecision := {"requires_human": true, "required_approvers": "two"}\n', {})).toMatchObject({ requiredApprovers: 0 });
  });
  test('data.config is the tenant policy_config', () => {
    const src = 'package agw.custom\nimport rego.v1\ndeny contains "too much" if input.params.n > data.config.max\n';
    expect(run(src, { params: { n: 5 } }, { max: 3 }).decision).toBe('deny');
    expect(run(src, { params: { n: 2 } }, { max: 3 }).decision).toBe('allow');
  });
});
