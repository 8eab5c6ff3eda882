/**
 * The export's read of audit records in a time range: the read model of the owner of audit_records
 * (chain/audit-record.repository.ts, `ExportRangeReads`). Tenant id first, always.
 */
export { ExportRangeReads as ExportRepository, type RangeStats } from '../chain/audit-record.repository';
