import corpus from './__fixtures__/poisoning-corpus.json';
import { approvalWrite, planPinning } from './tool-pinning';
import { type ToolDefinition, definitionSha256 } from './tool-definition';
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
