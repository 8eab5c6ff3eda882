/**
 * @module @agw/pii
 * Finds personal data in tool-call params. The vault service uses it to decide what to encrypt per data
 * subject; the gateway uses `mayContainPii` to skip the vault round trip for params that hold none (most
 * calls), which the vault would return unchanged anyway.
 *
 * @example
 * ```ts
 * if (mayContainPii(params)) stored = await vault.protectParams(...);
 * ```
 */
export * from './pii-detector';
export { mayContainPii } from './may-contain-pii';
