/** The Tools page's pure helpers (src/lib/upstreams.ts): its path, the order of tools, what a definition and a diff show. */
import { diffValue, reasonText, serverLine, shownDefinition, splitTools, toolsPath, toolsSelection } from '../src/lib/upstreams';
import type { UpstreamTool } from '../src/lib/wire';

const tool = (name: string, state: UpstreamTool['state'], over: Partial<UpstreamTool> = {}): UpstreamTool => ({
  name,
  federated_name: `up__${name}`,
  state,
  reason: null,
  definition: { name, description: `${name} pinned`, inputSchema: { type: 'object' } },
  definition_sha256: 'a'.repeat(64),
  candidate: null,
  candidate_sha256: null,
  markers: [],
  diff: [],
  first_seen_at: '2026-11-25T00:00:00.000Z',
  updated_at: '2026-11-25T00:00:00.000Z',
  approved_at: null,
  approved_by: null,
  ...over,
});

describe('Tools page path', () => {
  it('selects the upstream named in /tools/<name>, nothing on /tools, and is not the Tools page elsewhere', () => {
    expect(toolsSelection('/tools')).toBeNull();
    expect(toolsSelection('/tools/')).toBeNull();
    expect(toolsSelection('/tools/github')).toBe('github');
    expect(toolsSelection('/tools/my-server_2/extra')).toBe('my-server_2');
    expect(toolsSelection('/tools/%E0%A4%A')).toBeNull(); // a malformed escape selects nothing instead of throwing
    expect(toolsSelection('/toolshed')).toBeUndefined();
    expect(toolsSelection('/approvals')).toBeUndefined();
  });

  it('round-trips a name through the path', () => {
    for (const name of ['fixture', 'a_b-c', 'odd name/with slash']) expect(toolsSelection(toolsPath(name))).toBe(name);
    expect(toolsPath()).toBe('/tools');
    expect(toolsPath(null)).toBe('/tools');
  });
});

describe('tools of an upstream', () => {
  it('puts the quarantined on top and the others as active, then absent, each by name', () => {
    const { quarantined, others } = splitTools([tool('zeta', 'active'), tool('gone', 'absent'), tool('beta', 'quarantined'), tool('alpha', 'active'), tool('aaa', 'quarantined')]);
    expect(quarantined.map((t) => t.name)).toEqual(['aaa', 'beta']);
    expect(others.map((t) => `${t.state}:${t.name}`)).toEqual(['active:alpha', 'active:zeta', 'absent:gone']);
  });

  it('shows the pinned definition, or the candidate while nothing is pinned', () => {
    expect(shownDefinition(tool('add', 'active', { definition: { title: 'Add', description: 'Adds.', inputSchema: { type: 'object' }, outputSchema: { type: 'number' } } }))).toEqual({
      title: 'Add',
      description: 'Adds.',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'number' },
    });
    expect(shownDefinition(tool('new', 'quarantined', { definition: null, candidate: { description: 'New.', inputSchema: {} } }))).toMatchObject({ description: 'New.', inputSchema: {} });
    // a definition is free-form JSON: a non-string title or description is not shown as one
    expect(shownDefinition(tool('odd', 'active', { definition: { title: 7, description: '' } }))).toEqual({ title: undefined, description: undefined, inputSchema: undefined, outputSchema: undefined });
    expect(shownDefinition(tool('none', 'absent', { definition: null }))).toEqual({});
  });
});

describe('what a diff and a quarantine show', () => {
  it('shows a string as text, any other value as pretty JSON, and an absent side as a dash', () => {
    expect(diffValue('Current weather for a city.')).toBe('Current weather for a city.');
    expect(diffValue(undefined)).toBe('—');
    expect(diffValue(null)).toBe('null');
    expect(diffValue(false)).toBe('false');
    expect(diffValue({ type: 'string', enum: ['c', 'f'] })).toBe('{\n  "type": "string",\n  "enum": [\n    "c",\n    "f"\n  ]\n}');
  });

  it('explains each reason of a quarantine, and passes an unknown one through', () => {
    expect(reasonText('tool_definition_changed')).toMatch(/changed/);
    expect(reasonText('suspicious_description')).toMatch(/flagged/);
    expect(reasonText('approval_required')).toMatch(/manual/);
    expect(reasonText('something_new')).toBe('something_new');
    expect(reasonText(null)).toBe('');
  });

  it('names the server an upstream reported, or its URL when it never answered', () => {
    expect(serverLine({ server: { name: 'agw-fixture', version: '1.0.0', protocol_version: '2025-11-25' }, url: 'http://x/mcp' })).toBe('agw-fixture 1.0.0');
    expect(serverLine({ server: null, url: 'http://x/mcp' })).toBe('http://x/mcp');
  });
});
