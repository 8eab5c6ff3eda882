/** The generated modules of the contracts, one per `proto/agw/*.proto` (re-exported by index.ts, read by codecs.ts). */
export * as common from './generated/agw/common';
export * as decision from './generated/agw/decision';
export * as policy from './generated/agw/policy';
export * as audit from './generated/agw/audit';
export * as webhook from './generated/agw/webhook';
export * as vault from './generated/agw/vault';
export * as merkle from './generated/agw/merkle';
export * as anchor from './generated/agw/anchor';
export * as managed from './generated/agw/managed';
export * as federation from './generated/agw/federation';
