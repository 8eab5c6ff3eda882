/**
 * The vendored OCSF schema (schema/<version>/, copied from github.com/ocsf/ocsf-schema at a release tag by
 * scripts/vendor-schema.mjs, Apache-2.0) compiled to a JSON Schema for one event class and the profiles an
 * event declares, so that events can be checked by a JSON Schema validator against the schema's own files
 * rather than against what this package believes them to say.
 *
 * What the compiler reads, as OCSF's schema server does: a class's `extends` chain (api_activity →
 * application → base_event), attribute overrides at each level, `$include`d profile files (their attributes
 * count only when the event lists the profile in `metadata.profiles`, unless the class sets `profile: null`),
 * the dictionary's types (`string_t` … with their base types) and attribute definitions (`is_array`, `enum`),
 * objects with their own `extends`, `$include`s and `constraints` (`at_least_one`, `just_one`).
 * `requirement: "required"` becomes `required`; no other attribute is allowed (`additionalProperties: false`),
 * except inside `unmapped` and `json_t` values. Enumerated integer attributes (`*_id`) take only their listed
 * values. The datetime profile (`*_dt` siblings) is not compiled.
 */
import fs from 'node:fs';
import path from 'node:path';

export const OCSF_VERSION = '1.8.0';

type Json = Record<string, unknown>;
interface AttrDef {
  type?: string;
  is_array?: boolean;
  requirement?: string | null;
  enum?: Record<string, unknown>;
  profile?: string | null;
}
type Attrs = Record<string, AttrDef>;
export type JsonSchema = Record<string, unknown>;

const schemaDir = (version: string) => path.join(__dirname, '..', 'schema', version);

export class OcsfSchema {
  private readonly dictionary: { attributes: Record<string, AttrDef>; types: { attributes: Record<string, { type?: string }> } };
  private defs: Record<string, JsonSchema> = {};

  constructor(
    private readonly version = OCSF_VERSION,
    private readonly dir = schemaDir(version),
  ) {
    this.dictionary = this.read('dictionary.json') as never;
  }

  private read(rel: string): Json {
    return JSON.parse(fs.readFileSync(path.join(this.dir, rel), 'utf8')) as Json;
  }

  /** The class's uid as events carry it: category uid × 1000 + class uid. */
  classUid(eventFile: string): number {
    const cls = this.read(eventFile);
    let category = cls.category as string | undefined;
    for (let c: Json = cls; !category && c.extends; ) {
      c = this.read(this.eventFileOf(c.extends as string));
      category = c.category as string | undefined;
    }
    const categories = (this.read('categories.json') as { attributes: Record<string, { uid: number }> }).attributes;
    return categories[category as string].uid * 1000 + (cls.uid as number);
  }

  private eventFileOf(name: string): string {
    return name === 'base_event' ? 'events/base_event.json' : `events/application/${name}.json`;
  }

  /** Attributes of a class or object file after `extends` and `$include`, keeping profile marks. */
  private attributesOf(file: string, kind: 'event' | 'object', activeProfiles: ReadonlySet<string>): { attrs: Attrs; constraints?: Json } {
    const json = this.read(file);
    const parent = json.extends as string | undefined;
    let attrs: Attrs = {};
    let constraints: Json | undefined;
    if (parent && parent !== 'object') {
      const parentFile = kind === 'event' ? this.eventFileOf(parent) : `objects/${parent}.json`;
      const p = this.attributesOf(parentFile, kind, activeProfiles);
      attrs = p.attrs;
      constraints = p.constraints;
    }
    const own = { ...(json.attributes as Record<string, AttrDef | string[] | string>) };
    for (const inc of [own.$include ?? []].flat() as string[]) {
      const profile = this.read(inc);
      const name = profile.name as string;
      for (const [k, v] of Object.entries(profile.attributes as Attrs)) attrs[k] = { ...attrs[k], ...v, profile: name };
    }
    delete own.$include;
    for (const [k, v] of Object.entries(own as Attrs)) attrs[k] = { ...attrs[k], ...v };
    for (const [k, v] of Object.entries(attrs)) if (v.profile && !activeProfiles.has(v.profile)) delete attrs[k];
    return { attrs, constraints: (json.constraints as Json | undefined) ?? constraints };
  }

  private baseType(t: string): string {
    let cur = t;
    for (let n = 0; n < 5; n++) {
      const next = this.dictionary.types.attributes[cur]?.type;
      if (!next) return cur;
      cur = next;
    }
    return cur;
  }

  private attributeSchema(name: string, local: AttrDef, activeProfiles: ReadonlySet<string>): JsonSchema {
    const dict = this.dictionary.attributes[name] ?? {};
    const type = local.type ?? dict.type;
    if (!type) throw new Error(`OCSF ${this.version}: attribute ${name} has no type`);
    let s: JsonSchema;
    if (type === 'object') s = { type: 'object' };
    else if (type in this.dictionary.types.attributes) {
      const base = this.baseType(type);
      s =
        base === 'string_t' ? { type: 'string' }
        : base === 'integer_t' || base === 'long_t' ? { type: 'integer' }
        : base === 'float_t' ? { type: 'number' }
        : base === 'boolean_t' ? { type: 'boolean' }
        : {}; // json_t: any value
      // a class's enum adds to the dictionary's (0 Unknown and 99 Other stay valid), as the schema server merges them
      const values = local.enum || dict.enum ? { ...dict.enum, ...local.enum } : undefined;
      if (values && s.type === 'integer') s = { ...s, enum: Object.keys(values).map(Number) };
    } else s = { $ref: `#/$defs/${this.objectDef(type, activeProfiles)}` };
    return (local.is_array ?? dict.is_array) ? { type: 'array', items: s } : s;
  }

  private objectDef(name: string, activeProfiles: ReadonlySet<string>): string {
    if (!this.defs[name]) {
      this.defs[name] = {}; // placeholder: objects refer to themselves (process.parent_process …)
      const { attrs, constraints } = this.attributesOf(`objects/${name}.json`, 'object', activeProfiles);
      this.defs[name] = this.shape(attrs, constraints, activeProfiles);
    }
    return name;
  }

  private shape(attrs: Attrs, constraints: Json | undefined, activeProfiles: ReadonlySet<string>): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    for (const [k, v] of Object.entries(attrs)) properties[k] = this.attributeSchema(k, v, activeProfiles);
    const required = Object.entries(attrs)
      .filter(([, v]) => v.requirement === 'required')
      .map(([k]) => k);
    const s: JsonSchema = { type: 'object', properties, additionalProperties: false, ...(required.length ? { required } : {}) };
    const atLeastOne = constraints?.at_least_one as string[] | undefined;
    const justOne = constraints?.just_one as string[] | undefined;
    if (atLeastOne) s.anyOf = atLeastOne.map((k) => ({ required: [k] }));
    if (justOne) s.oneOf = justOne.map((k) => ({ required: [k] }));
    return s;
  }

  /** A JSON Schema (draft 2020-12 keywords ajv reads) of one event class with the given profiles active. */
  eventSchema(eventFile: string, profiles: readonly string[] = []): JsonSchema {
    const active = new Set(profiles);
    this.defs = {}; // objects compile per profile set (objects $include profiles too)
    const { attrs, constraints } = this.attributesOf(eventFile, 'event', active);
    const root = this.shape(attrs, constraints, active) as { properties: Record<string, JsonSchema> };
    // what the schema server derives per class: its uid, its category's, and type_uid = class_uid × 100 + activity_id
    const classUid = this.classUid(eventFile);
    const activities = (root.properties.activity_id.enum as number[]) ?? [];
    root.properties.class_uid = { type: 'integer', enum: [classUid] };
    root.properties.category_uid = { type: 'integer', enum: [Math.floor(classUid / 1000)] };
    root.properties.type_uid = { type: 'integer', enum: activities.map((a) => classUid * 100 + a) };
    return { $id: `ocsf:${this.version}:${eventFile}:${[...active].sort().join(',')}`, ...root, $defs: { ...this.defs } };
  }
}
