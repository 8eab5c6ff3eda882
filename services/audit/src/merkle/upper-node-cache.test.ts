import type { NodeKey } from './rfc9162';
import { UpperNodeCache } from './upper-node-cache';

const h = (n: number) => Buffer.alloc(32, n);
/** nodes as MerkleRepository.nodes answers them (keyed level:index), with their keys */
const read = (...nodes: Array<[level: number, index: number, hash: Buffer]>): [NodeKey[], Map<string, Buffer>] => [
  nodes.map(([level, index]) => ({ level, index })),
  new Map(nodes.map(([level, index, hash]) => [`${level}:${index}`, hash])),
];

describe('UpperNodeCache', () => {
  it('keeps only the levels from minLevel up, per tenant', () => {
    const cache = new UpperNodeCache({ minLevel: 8, maxNodes: 100 });
    cache.remember('a', ...read([7, 1, h(1)], [8, 0, h(2)], [12, 3, h(3)]));
    expect(cache.size).toBe(2);
    const { found, missing } = cache.lookup('a', [{ level: 7, index: 1 }, { level: 8, index: 0 }, { level: 12, index: 3 }, { level: 9, index: 0 }]);
    expect([...found]).toEqual([['8:0', h(2)], ['12:3', h(3)]]);
    expect(missing).toEqual([{ level: 7, index: 1 }, { level: 9, index: 0 }]);
    // another tenant's tree has nodes of the same address: never shared
    expect(cache.lookup('b', [{ level: 8, index: 0 }]).found.size).toBe(0);
  });

  it('evicts the least recently used nodes past maxNodes', () => {
    const cache = new UpperNodeCache({ minLevel: 0, maxNodes: 3 });
    cache.remember('t', ...read([0, 0, h(0)], [0, 1, h(1)], [0, 2, h(2)]));
    cache.lookup('t', [{ level: 0, index: 0 }]); // used: now the most recent
    cache.remember('t', ...read([0, 3, h(3)]));
    expect(cache.size).toBe(3);
    const { found } = cache.lookup('t', [0, 1, 2, 3].map((index) => ({ level: 0, index })));
    expect([...found.keys()].sort()).toEqual(['0:0', '0:2', '0:3']);
  });

  it('forgets one tenant', () => {
    const cache = new UpperNodeCache({ minLevel: 0, maxNodes: 10 });
    cache.remember('t1', ...read([0, 0, h(0)]));
    cache.remember('t2', ...read([0, 0, h(1)]));
    cache.forget('t1');
    expect(cache.lookup('t1', [{ level: 0, index: 0 }]).found.size).toBe(0);
    expect(cache.lookup('t2', [{ level: 0, index: 0 }]).found.get('0:0')).toEqual(h(1));
  });
});
