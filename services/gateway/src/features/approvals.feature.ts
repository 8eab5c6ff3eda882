/** Approvals (the queue, four-eyes votes, human decisions): what their routes use. */
import type { ApprovalQueue } from '../approvals/approval-queue';
import type { SettingsService } from '../tenants/settings.service';

export interface ApprovalsFeature {
  approvals: ApprovalQueue;
  /** approvals_require_human: who may decide */
  settings: SettingsService;
}
