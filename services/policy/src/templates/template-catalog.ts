/**
 * The template Rego modules (`templates/<name>.rego`), compiled once at start. Everything about a
 * template is read from its module: parameters with types and defaults (`parameters`), the rule list
 * (`rules`, evaluated with the tenant's config so triggers show its values) and the decision.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { type PreparedPolicy, compile } from '@agw/rego';
import { sha256Hex } from '@agw/shared';

export const TEMPLATE_NAMES = ['general', 'financial', 'email', 'crm', 'data_access'] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

export interface TemplateParameter {
  name: string;
  type: 'integer' | 'number' | 'boolean' | 'string' | 'string[]' | 'object';
  default: unknown;
  description: string;
  /** bounds of a numeric parameter, when its declaration gives them (else 0 and LIMITS in policy-config.ts) */
  minimum?: number;
  maximum?: number;
}

export interface RuleInfo {
  id: string;
  kind: 'violation' | 'approval';
  severity: string;
  trigger: string;
}

export interface LoadedTemplate {
  name: TemplateName;
  description: string;
  source: string;
  sourceHash: string;
  policy: PreparedPolicy;
  parameters: TemplateParameter[];
  defaults: Record<string, unknown>;
  /** `data.agw.<name>` */
  packagePath: string;
}

export class TemplateCatalog {
  private constructor(private readonly templates: Map<TemplateName, LoadedTemplate>) {}

  /** Reads and compiles every template; a template that does not compile stops the service at start. */
  static async load(dir: string): Promise<TemplateCatalog> {
    const map = new Map<TemplateName, LoadedTemplate>();
    for (const name of TEMPLATE_NAMES) {
      const file = path.join(dir, `${name}.rego`);
      const source = await fs.readFile(file, 'utf8');
      const policy = compile([{ name: `${name}.rego`, source }]);
      const packagePath = `data.agw.${name}`;
      if (!policy.packages.includes(`agw.${name}`)) throw new Error(`${file} must declare package agw.${name}`);
      const params = (policy.evaluate(`${packagePath}.parameters`, { data: { config: {} } }) ?? {}) as Record<string, { type: TemplateParameter['type']; default: unknown; description: string; minimum?: number; maximum?: number }>;
      const meta = (policy.evaluate(`${packagePath}.template`, { data: { config: {} } }) ?? {}) as { description?: string };
      const parameters = Object.entries(params).map(([pname, p]) => ({ name: pname, type: p.type, default: p.default, description: p.description, ...(typeof p.minimum === 'number' ? { minimum: p.minimum } : {}), ...(typeof p.maximum === 'number' ? { maximum: p.maximum } : {}) }));
      map.set(name, {
        name,
        description: meta.description ?? '',
        source,
        sourceHash: sha256Hex(source),
        policy,
        parameters,
        defaults: Object.fromEntries(parameters.map((p) => [p.name, p.default])),
        packagePath,
      });
    }
    return new TemplateCatalog(map);
  }

  get(name: string): LoadedTemplate | undefined {
    return this.templates.get(name as TemplateName);
  }

  list(): LoadedTemplate[] {
    return [...this.templates.values()];
  }

  /** The template's rules with the tenant's config (crm lists one restricted_field_modification_<field> per field). */
  rules(name: TemplateName, config: Record<string, unknown>): RuleInfo[] {
    const t = this.templates.get(name);
    if (!t) return [];
    return (t.policy.evaluate(`${t.packagePath}.rules`, { data: { config } }) ?? []) as RuleInfo[];
  }
}
