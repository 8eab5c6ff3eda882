/**
 * The state of one evaluation: the compiled module tree, input, data, the clock, and the caches (rule
 * values of this evaluation; values of non-volatile rules shared by evaluations over the same data
 * document), plus what `with` put in place (overrides of input/data, mocked functions).
 */
import type { BuiltinDef } from './builtins/types.js';
import type { Node } from './compiler.js';
import type { RegoError } from './errors.js';
import type { Value } from './value.js';

export type K = () => boolean;
export type KV = (v: Value) => boolean;
export type Frame = (Value | undefined)[];

/** a rule value being computed (a recursion if asked for again) */
export const COMPUTING = Symbol('computing');
/** a rule value not computed yet */
export const UNSET = Symbol('unset');

export type MockT = { kind: 'value'; v: Value } | { kind: 'builtin'; def: BuiltinDef } | { kind: 'user'; path: string[] };

const sharedCaches = new WeakMap<object, [Map<unknown, Value | undefined>, Map<unknown, Value | undefined>]>();

export class EvalCtx {
  cache: (Value | undefined | typeof COMPUTING | typeof UNSET)[];
  /** cache of non-volatile rule values, shared by evaluations over the same data document */
  shared?: Map<unknown, Value | undefined>;
  overrides?: Map<string, Value>;
  mocks?: Map<string, MockT>;
  builtinCache = new Map<string, unknown>();
  errs: RegoError[] = [];
  /** coverage (policy tests): body expressions evaluated (as OPA's coverage counts them, whatever their outcome) and rules that produced a value */
  cover?: { exprs: Set<unknown>; rules: Set<unknown> };
  constructor(public root: Node, public input: Value | undefined, public data: Value, public nowNs: bigint, public strict: boolean) {
    this.cache = new Array(root.nodeCount).fill(UNSET);
  }
  useSharedCache(): void {
    const d = this.data as object;
    if (d === null || typeof d !== 'object') return;
    let m = sharedCaches.get(d);
    if (!m) { m = [new Map(), new Map()]; sharedCaches.set(d, m); }
    this.shared = m[this.strict ? 1 : 0];
  }
  derive(): EvalCtx {
    const c = new EvalCtx(this.root, this.input, this.data, this.nowNs, this.strict);
    c.overrides = this.overrides; c.mocks = this.mocks; c.builtinCache = this.builtinCache; c.errs = this.errs; c.cover = this.cover;
    return c;
  }
}
