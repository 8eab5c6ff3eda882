import corpus from './__fixtures__/poisoning-corpus.json';
import { approvalWrite, planPinning } from './tool-pinning';
import { type ToolDefinition, definitionSha256, legacyDefinitionSha256, legacyPinnedForm } from './tool-definition';
import type { ToolRow, ToolWrite } from './upstream.repository';

const tool = (name: string, description = `The ${name} tool.`): ToolDefinition => ({ name, description, inputSchema: { type: 'object' } });

/** The stored row a write leaves (what the repository would read back). */
const stored = (w: ToolWrite): ToolRow => ({
  tenant_id: 't',
  upstream: 'u',
  first_seen_at: new Date(),
  updated_at: new Date(),
  approved_at: w.approved_at ?? null,
  approved_by: w.approved_by ?? null,
  name: w.name,
  state: w.state,
  reason: w.reason,
  markers: w.markers,
  pinned: w.pinned,
  pinned_sha256: w.pinned_sha256,
  candidate: w.candidate,
  candidate_sha256: w.candidate_sha256,
});

const LATER = { initial: false };
const FIRST = { initial: true };

describe('planPinning: a new tool', () => {
  test('on the first read (registration) in auto mode, a clean tool goes active, pinned', async () => {
    const plan = await planPinning([], [tool('echo')], 'auto', FIRST);
    expect(plan.writes).toEqual([expect.objectContaining({ name: 'echo', state: 'active', reason: null, pinned_sha256: definitionSha256(tool('echo')) })]);
    expect(plan.quarantined).toEqual([]);
  });

  test('after the first read, a tool never seen waits for a human (approval_required) even in auto mode', async () => {
    const first = await planPinning([], [tool('echo')], 'auto', FIRST);
    const rows = first.writes.map(stored);
    const plan = await planPinning(rows, [tool('echo'), tool('second')], 'auto', LATER);
    expect(plan.writes).toEqual([
      expect.objectContaining({ name: 'second', state: 'quarantined', reason: 'approval_required', pinned: null, pinned_sha256: null, candidate_sha256: definitionSha256(tool('second')) }),
    ]);
    expect(plan.quarantined).toEqual([expect.objectContaining({ tool: 'second', reason: 'approval_required', pinned_sha256: null, markers: [] })]);
  });

  test('a human approves it; the next read leaves it active', async () => {
    const plan = await planPinning([], [tool('second')], 'auto', LATER);
    const approved = stored(approvalWrite(stored(plan.writes[0]), 'ops@example.com')!);
    expect(approved).toMatchObject({ state: 'active', pinned_sha256: definitionSha256(tool('second')) });
    const again = await planPinning([approved], [tool('second')], 'auto', LATER);
    expect(again).toEqual({ writes: [], quarantined: [] });
  });

  test('a tool that waits for a human and comes back with another definition still waits (never active without one)', async () => {
    const waiting = (await planPinning([], [tool('second')], 'auto', LATER)).writes.map(stored);
    const plan = await planPinning(waiting, [tool('second', 'Changed while waiting.')], 'auto', LATER);
    expect(plan.writes).toEqual([expect.objectContaining({ name: 'second', state: 'quarantined', reason: 'approval_required', candidate_sha256: definitionSha256(tool('second', 'Changed while waiting.')) })]);
    // the same candidate again: left as it is, no second alert
    const same = await planPinning(plan.writes.map(stored), [tool('second', 'Changed while waiting.')], 'auto', LATER);
    expect(same).toEqual({ writes: [], quarantined: [] });
  });

  test('manual mode: every new tool waits, on the first read too', async () => {
    const plan = await planPinning([], [tool('echo')], 'manual', FIRST);
    expect(plan.writes).toEqual([expect.objectContaining({ name: 'echo', state: 'quarantined', reason: 'approval_required' })]);
  });

  test.each([
    ['on the first read', FIRST],
    ['on a later read', LATER],
  ])('a flagged tool is suspicious_description %s', async (_when, options) => {
    const attack = corpus.attacks.find((a) => a.id === 'cyrillic_homoglyphs')!.definition as ToolDefinition;
    const plan = await planPinning([], [attack], 'auto', options);
    expect(plan.quarantined).toEqual([expect.objectContaining({ tool: 'weather', reason: 'suspicious_description', markers: expect.arrayContaining([expect.objectContaining({ rule: 'mixed_script' })]) })]);
  });

  test('a pinned tool whose definition changes is tool_definition_changed on any read', async () => {
    const rows = (await planPinning([], [tool('echo')], 'auto', FIRST)).writes.map(stored);
    const plan = await planPinning(rows, [tool('echo', 'Changed.')], 'auto', LATER);
    expect(plan.quarantined).toEqual([expect.objectContaining({ tool: 'echo', reason: 'tool_definition_changed' })]);
  });
});

describe('planPinning: the whole definition, in its key order', () => {
  const withTasks = (taskSupport: string, extra: Record<string, unknown> = {}): ToolDefinition => ({
    name: 'research',
    title: 'Research',
    description: 'Researches a question.',
    inputSchema: { type: 'object', properties: { query: { type: 'string' }, depth: { type: 'number' } } },
    execution: { taskSupport },
    ...extra,
  });

  test('a changed execution, icons or _meta of a pinned tool is tool_definition_changed, with its diff', async () => {
    const rows = (await planPinning([], [withTasks('forbidden')], 'auto', FIRST)).writes.map(stored);
    for (const [changed, path] of [
      [withTasks('required'), 'execution.taskSupport'],
      [withTasks('forbidden', { icons: [{ src: 'https://cdn.example/i.png' }] }), 'icons'],
      [withTasks('forbidden', { _meta: { 'ui/resourceUri': 'ui://other' } }), '_meta'],
    ] as const) {
      const plan = await planPinning(rows, [changed], 'auto', LATER);
      expect(plan.quarantined).toEqual([expect.objectContaining({ tool: 'research', reason: 'tool_definition_changed', diff: [expect.objectContaining({ path })] })]);
    }
  });

  test('the same definition in another key order is no change, and is stored in the new order', async () => {
    const rows = (await planPinning([], [withTasks('forbidden')], 'auto', FIRST)).writes.map(stored);
    const reordered: ToolDefinition = { execution: { taskSupport: 'forbidden' }, name: 'research', inputSchema: { properties: { depth: { type: 'number' }, query: { type: 'string' } }, type: 'object' }, description: 'Researches a question.', title: 'Research' };
    const plan = await planPinning(rows, [reordered], 'auto', LATER);
    expect(plan.quarantined).toEqual([]);
    expect(plan.writes).toEqual([expect.objectContaining({ state: 'active', pinned_sha256: rows[0].pinned_sha256 })]);
    expect(JSON.stringify(plan.writes[0].pinned)).toBe(JSON.stringify(reordered));
    // the same order again: nothing to write
    expect(await planPinning(plan.writes.map(stored), [reordered], 'auto', LATER)).toEqual({ writes: [], quarantined: [] });
  });

  test('a pin made when six fields were pinned still matches, and becomes a pin of the whole definition', async () => {
    const now = withTasks('optional', { icons: [{ src: 'https://cdn.example/i.png' }] });
    const legacy = { ...stored(stored((await planPinning([], [now], 'auto', FIRST)).writes[0])), pinned: legacyPinnedForm(now) as Record<string, unknown>, pinned_sha256: legacyDefinitionSha256(now) };
    expect(legacy.pinned_sha256).not.toBe(definitionSha256(now));
    const plan = await planPinning([legacy], [now], 'auto', LATER);
    expect(plan.quarantined).toEqual([]);
    expect(plan.writes).toEqual([expect.objectContaining({ name: 'research', state: 'active', pinned: now, pinned_sha256: definitionSha256(now) })]);
    // from then on the whole definition counts: a changed execution is a change
    const next = await planPinning(plan.writes.map(stored), [withTasks('required', { icons: [{ src: 'https://cdn.example/i.png' }] })], 'auto', LATER);
    expect(next.quarantined).toEqual([expect.objectContaining({ reason: 'tool_definition_changed' })]);
  });

  test('a legacy pin whose six fields changed is tool_definition_changed', async () => {
    const now = withTasks('forbidden');
    const legacy = { ...stored((await planPinning([], [now], 'auto', FIRST)).writes[0]), pinned: legacyPinnedForm(now) as Record<string, unknown>, pinned_sha256: legacyDefinitionSha256(now) };
    const plan = await planPinning([legacy], [{ ...now, description: 'Changed.' }], 'auto', LATER);
    expect(plan.quarantined).toEqual([expect.objectContaining({ reason: 'tool_definition_changed' })]);
  });

  test('a legacy candidate that waits for a human becomes the whole definition, still waiting, without a second alert', async () => {
    const now = withTasks('forbidden', { icons: [] });
    const waiting = stored((await planPinning([], [now], 'auto', LATER)).writes[0]);
    const legacy = { ...waiting, candidate: legacyPinnedForm(now) as Record<string, unknown>, candidate_sha256: legacyDefinitionSha256(now) };
    const plan = await planPinning([legacy], [now], 'auto', LATER);
    expect(plan.quarantined).toEqual([]);
    expect(plan.writes).toEqual([expect.objectContaining({ state: 'quarantined', reason: 'approval_required', candidate: now, candidate_sha256: definitionSha256(now) })]);
  });
});

describe('planPinning: the event loop', () => {
  test('yields between tools: a callback queued with setImmediate runs before a 2-tool plan resolves', async () => {
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    const plan = await planPinning([], [tool('a'), tool('b')], 'auto', FIRST).then((p) => ({ p, ranBefore: ran }));
    expect(plan.ranBefore).toBe(true);
    expect(plan.p.writes.map((w) => w.name)).toEqual(['a', 'b']);
  });

  test('yields once per tool after the first', async () => {
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await planPinning([], ['a', 'b', 'c', 'd', 'e'].map((n) => tool(n)), 'auto', FIRST);
    counting = false;
    expect(turns).toBeGreaterThanOrEqual(4);
  });
});
