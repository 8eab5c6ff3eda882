/**
 * The builtin registry: `BUILTINS` maps the dotted name of every supported builtin (`count`,
 * `time.now_ns`, `internal.member_2`, ...) to its `BuiltinDef`, filled once at load time by the `register`
 * function of each builtin module. The compiler resolves calls and `with` targets against it: a name
 * missing here is a compile error (`rego_type_error: undefined function`), which is how unsupported
 * builtins are refused.
 */
import type { BuiltinDef } from './types.js';
import { register as core } from './core.js';
import { register as strings } from './strings.js';
import { register as objects } from './objects.js';
import { register as encoding } from './encoding.js';
import { register as time } from './time.js';
import { register as net } from './net.js';
import { register as uri } from './uri.js';
import { register as crypto } from './crypto.js';
import { register as yaml } from './yaml.js';
import { register as globs } from './globs.js';

export const BUILTINS = new Map<string, BuiltinDef>();
const reg = (name: string, arity: number, fn: BuiltinDef['fn'], multi?: boolean) => { BUILTINS.set(name, { name, arity, fn, multi }); };
core(reg); strings(reg); objects(reg); encoding(reg); time(reg); net(reg); uri(reg); crypto(reg); yaml(reg); globs(reg);
