/**
 * tools/list's federated tools: the upstream's definition byte for byte (every field, in its key order),
 * only its name replaced by the federated one, in its place (docs/federation.md, "Pinned definitions").
 */
import type { FederatedTool } from '../federation/federated-catalog';
import { federatedToolListing, listedTools } from './listed-tools';

const fed = (definition: FederatedTool['definition']): FederatedTool => ({ name: 'up__t', upstream: 'up', tool: 't', definition });

describe('federatedToolListing', () => {
  test('gives the definition as text unchanged but for the name, which keeps its place', () => {
    const definition = {
      title: 'T',
      name: 't',
      inputSchema: { properties: { resourceType: { type: 'string' }, resourceId: { type: 'number' } }, type: 'object' },
      execution: { taskSupport: 'forbidden' },
      icons: [{ src: 'https://cdn.example/t.png' }],
      _meta: { b: 1, a: 2 },
      'x-later': true,
    };
    const listed = federatedToolListing(fed(definition));
    expect(JSON.stringify(listed)).toBe(JSON.stringify({ ...definition, name: 'up__t' }));
    expect(Object.keys(listed)).toEqual(Object.keys(definition));
    expect(definition.name).toBe('t');
  });

  test('adds no field the upstream left out (no empty description), and puts a missing name first', () => {
    expect(JSON.stringify(federatedToolListing(fed({ inputSchema: { type: 'object' } })))).toBe('{"name":"up__t","inputSchema":{"type":"object"}}');
  });

  test('listedTools lists federated tools first, then credential tools', () => {
    const tools = listedTools({ federated: new Map([['up__t', fed({ name: 't', inputSchema: { type: 'object' } })]]), credential: ['stripe'] });
    expect(tools.map((t) => t.name)).toEqual(['up__t', 'stripe']);
  });
});
