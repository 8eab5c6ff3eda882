import path from 'node:path';
import { InputError } from '@agw/shared';
import { TemplateCatalog } from '../templates/template-catalog';
import { applyConfigPatch, effectiveConfig } from './policy-config';

let catalog: TemplateCatalog;
beforeAll(async () => {
  catalog = await TemplateCatalog.load(path.resolve(__dirname, '../../templates'));
});

describe('policy_config overrides', () => {
  test('keys given replace defaults, others keep theirs; null resets a key', () => {
    const t = catalog.get('general')!;
    const o1 = applyConfigPatch(t, {}, { daily_action_limit: 5 });
    expect(effectiveConfig(t.defaults, o1)).toEqual({ daily_action_limit: 5, anomaly_threshold: 0.7, cooldown_violations: 3, approve_destructive: true });
    const o2 = applyConfigPatch(t, o1, { anomaly_threshold: 0.9 });
    expect(o2).toEqual({ daily_action_limit: 5, anomaly_threshold: 0.9 });
    expect(applyConfigPatch(t, o2, { daily_action_limit: null })).toEqual({ anomaly_threshold: 0.9 });
  });
  test('unknown keys and wrong types are a 422 naming each key', () => {
    const t = catalog.get('crm')!;
    let err: unknown;
    try {
      applyConfigPatch(t, {}, { bulk_threshold: 1.5, restricted_fields: ['a', 1], allow_delete: 'yes', colour: 'red' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).issues.map((i) => i.loc.join('.'))).toEqual([
      'policy_config.bulk_threshold',
      'policy_config.restricted_fields',
      'policy_config.allow_delete',
      'policy_config.colour',
    ]);
  });
  test('numeric parameters are never negative nor beyond a usable range (-1 and 1e308 were accepted): a 422 naming the key', () => {
    const t = catalog.get('general')!;
    const issues = (patch: Record<string, unknown>) => {
      try {
        applyConfigPatch(t, {}, patch);
        return [];
      } catch (e) {
        return (e as InputError).issues.map((i) => `${i.loc.join('.')} ${i.type}: ${i.msg}`);
      }
    };
    expect(issues({ daily_action_limit: -1 })).toEqual(['policy_config.daily_action_limit out_of_range: must be between 0 and 1000000000']);
    expect(issues({ daily_action_limit: 1e308 })).toEqual(['policy_config.daily_action_limit integer_type: must be of type integer']);
    expect(issues({ anomaly_threshold: -0.5 })).toEqual(['policy_config.anomaly_threshold out_of_range: must be between 0 and 1000000000000000']);
    expect(issues({ daily_action_limit: 0, cooldown_violations: 1_000_000_000, anomaly_threshold: 0.5 })).toEqual([]);
  });
  test('object parameters merge key by key', () => {
    const t = catalog.get('financial')!;
    const eff = effectiveConfig(t.defaults, { business_hours: { timezone: 'Europe/Berlin' } }) as { business_hours: Record<string, unknown> };
    expect(eff.business_hours).toMatchObject({ timezone: 'Europe/Berlin', start_hour: 9, end_hour: 18 });
  });
  test('a custom policy takes any JSON config', () => {
    expect(applyConfigPatch(undefined, {}, { anything: { nested: [1] } })).toEqual({ anything: { nested: [1] } });
  });
});
