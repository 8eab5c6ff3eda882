/**
 * Federated names are unique and parseable, and a glob `<upstream>__*` selects that upstream's tools only
 * (docs/federation.md, "Naming"; issue 42, item 7): checked over every upstream and tool name of a small
 * alphabet that holds the characters that matter (`_`, `-`, a letter, a digit).
 */
import { matchesAnyGlob } from '@agw/shared';
import { federatedName, federatedToolProblem, upstreamNameProblem } from './federation';

/** Every string of 1..max characters of `alphabet`. */
function strings(alphabet: string, max: number): string[] {
  let level = [''];
  const out: string[] = [];
  for (let n = 1; n <= max; n++) {
    level = level.flatMap((s) => [...alphabet].map((c) => s + c));
    out.push(...level);
  }
  return out;
}

const upstreams = strings('a1_-', 4).filter((n) => upstreamNameProblem(n) === undefined);
const tools = strings('ab_-', 4);
const federated = (u: string) => tools.filter((t) => federatedToolProblem(u, t) === undefined).map((t) => ({ upstream: u, tool: t, name: federatedName(u, t) }));
const all = upstreams.flatMap(federated);

describe('upstream names', () => {
  test.each(['a_', 'a-', 'a__b', '_a', '-a', 'A', 'a.b', '', 'x'.repeat(65)])('%p cannot name a new upstream', (name) => {
    expect(upstreamNameProblem(name)).toMatch(/starting and ending with a letter or digit, without "__"/);
  });

  test.each(['a', '1', 'a_b', 'a-b', 'a_-b', 'github', 'x'.repeat(64)])('%p can', (name) => {
    expect(upstreamNameProblem(name)).toBeUndefined();
  });

  test('a tool whose name starts with "_" is not federated; other tool names are, within the MCP name rule', () => {
    expect(federatedToolProblem('a', '_b')).toBe('leading_underscore');
    expect(federatedToolProblem('a', '__b')).toBe('leading_underscore');
    expect(federatedToolProblem('a', 'b_')).toBeUndefined();
    expect(federatedToolProblem('a', 'b__c')).toBeUndefined();
    expect(federatedToolProblem('a', 'b c')).toBe('invalid_name');
    expect(federatedToolProblem('a', 'b'.repeat(126))).toBe('invalid_name');
  });
});

describe('federated names', () => {
  test(`are unique over ${all.length} (upstream, tool) pairs, and split at their first "__"`, () => {
    expect(upstreams.length).toBeGreaterThan(50);
    const owner = new Map<string, string>();
    const wrong: string[] = [];
    for (const f of all) {
      const first = owner.get(f.name);
      if (first) wrong.push(`${f.name}: ${first} and ${f.upstream}/${f.tool}`);
      owner.set(f.name, `${f.upstream}/${f.tool}`);
      const at = f.name.indexOf('__');
      if (f.name.slice(0, at) !== f.upstream || f.name.slice(at + 2) !== f.tool) wrong.push(`${f.name} splits wrong`);
    }
    expect(wrong).toEqual([]);
  });

  test('names of upstreams registered under the former rule (ending with "_" or "-") still cannot collide', () => {
    const former = strings('a1_-', 4).filter((n) => /^[a-z0-9]/.test(n) && !n.includes('__'));
    const names = former.flatMap(federated).map((f) => f.name);
    expect(former).toContain('a_');
    expect(new Set(names).size).toBe(names.length);
  });

  test('the review\'s pair: upstream `a` with tool `_b` and upstream `a_` with tool `b` cannot both exist', () => {
    expect(federatedToolProblem('a', '_b')).toBe('leading_underscore');
    expect(upstreamNameProblem('a_')).toBeDefined();
  });

  test('the glob `<upstream>__*` selects the tools of that upstream and of no other', () => {
    const wrong: string[] = [];
    for (const u of upstreams) {
      const selected = all.filter((f) => matchesAnyGlob([`${u}__*`], f.name));
      wrong.push(...selected.filter((f) => f.upstream !== u).map((f) => `${u}__* selects ${f.upstream}/${f.tool}`));
      if (selected.length !== federated(u).length) wrong.push(`${u}__* misses tools of ${u}`);
    }
    expect(wrong).toEqual([]);
  });
});
