import { InputError, requiredField } from './errors';

describe('requiredField', () => {
  it('passes a set value through', () => {
    expect(requiredField('t1', 'tenant_id')).toBe('t1');
  });

  it('refuses an empty one as a missing field, named', () => {
    let thrown: unknown;
    try {
      requiredField('', 'tenant_id');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as InputError).issues).toEqual([{ loc: ['tenant_id'], msg: 'tenant_id is required', type: 'missing' }]);
  });
});
