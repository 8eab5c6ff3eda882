/**
 * @module @agw/verifier: offline verification of a tenant's evidence (the `agw-verify` CLI and its parts).
 *
 * ```ts
 * const key = parseVerifierKey(vkeyText);
 * const results = await verifyExport(JSON.parse(exportJson), key);
 * ```
 */
export { parseVerifierKey, openNote, parseCheckpoint, keyIdOf, type VerifierKey } from './signed-note';
export { verifyInclusion, verifyConsistency, leafHash } from './rfc9162';
export { verifyWitnesses } from './verify-witnesses';
export { COSIGNATURE_V1_TYPE, type CosignerKey, type WitnessPolicyResult, checkWitnessPolicy, cosignatureTime, cosignedMessage, cosignerKeyIdOf, cosignerVkey, parseCosignerKey, splitNote } from './cosignature';
export { verifyExport, recomputeRecordHash, hasTenantRecordIds, HASHED_KEYS, HASHED_WHEN_SET_KEYS, type HashedKeys, type CheckResult, type OnChainReader } from './verify-export';
export type {
  ComplianceExport, AuditEvidence, ExportHeader, ExportSummary, ExportedRecord, SampleInclusionProof, AnchorReference, ExportEvidence, ExportCheckpoint,
} from './export-format';
export { viemChainReader } from './chain-reader';
export { verifyReceipt, receiptOf, parseReceiptText, type ReceiptFile, type ReceiptProofFile, type ParsedReceipt } from './verify-receipt';
