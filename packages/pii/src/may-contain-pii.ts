import { detectInValue } from './pii-detector';

/**
 * true when the vault's protector would find anything to encrypt in `params`: a scalar that is personal
 * data by its value or its field name (the same `detectInValue` the vault runs), or an object already
 * shaped like a PII envelope (`$pii`), which the vault must see. Conservative: false only when the vault
 * would return the params unchanged.
 */
export function mayContainPii(params: Record<string, unknown>): boolean {
  const visit = (node: unknown, fieldName: string | undefined): boolean => {
    if (Array.isArray(node)) return node.some((v) => visit(v, fieldName));
    if (node && typeof node === 'object') {
      return Object.entries(node as Record<string, unknown>).some(([k, v]) => k === '$pii' || visit(v, k));
    }
    if (node === null || node === undefined || typeof node === 'boolean') return false;
    return detectInValue(node, fieldName).kinds.length > 0;
  };
  return Object.entries(params).some(([k, v]) => k === '$pii' || visit(v, k));
}
