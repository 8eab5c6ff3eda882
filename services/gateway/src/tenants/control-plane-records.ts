/**
 * Who changed the tenant's control plane (docs/audit.md, "Who acted"): each change of settings, policy, keys,
 * members and OAuth consents is a `control_plane` record (decision `changed`, no decision event) that names
 * the member who made it: `details.member` {id, email}, the e-mail encrypted for its data subject as the
 * PII rules say (docs/vault.md), so crypto-shredding the subject erases it; a machine credential (the
 * tenant key, a session made from it) is named `details.actor` instead. Only names of what changed are
 * recorded (setting keys, ids), never values: a webhook secret or a password must not reach the chain.
 */
import { randomUUID } from 'node:crypto';
import { controlPlaneRecord } from '@agw/shared';
import type { AuthContext } from './auth-context';
import type { DecisionRecorder } from '../pipeline/decision-recorder';

/** What changed: the area (`tool`), the operation (`method`) and facts without values. */
export interface ControlPlaneChange {
  tool: 'settings' | 'policy' | 'api_keys' | 'members' | 'oauth_consent';
  method: string;
  details: Record<string, unknown>;
}

export type Pseudonymise = (tenantId: string, actionId: string, email: string) => Promise<unknown>;

/** The member a caller is (a member's own session), else undefined. */
export const memberOf = (a: AuthContext): { id: string; email: string } | undefined =>
  a.method === 'jwt' && !a.viaApiKey && a.userId && a.email ? { id: a.userId, email: a.email } : undefined;

/** A machine credential as a record names it (never a secret). */
export const machineActorOf = (a: AuthContext): string => (a.method === 'jwt' ? 'api_key_session' : a.method === 'api_key' ? `api_key:${a.keyScope ?? 'tenant'}` : a.method);

export class ControlPlaneRecords {
  constructor(
    private readonly recorder: Pick<DecisionRecorder, 'record'>,
    private readonly pseudonymise?: Pseudonymise,
  ) {}

  /** `details.member` for a member (e-mail pseudonymised when a pseudonymiser is set). */
  async memberDetails(tenantId: string, actionId: string, m: { id: string; email: string }): Promise<{ id: string; email?: unknown }> {
    return { id: m.id, ...(this.pseudonymise ? { email: await this.pseudonymise(tenantId, actionId, m.email) } : {}) };
  }

  async record(tenantId: string, auth: AuthContext, change: ControlPlaneChange): Promise<void> {
    const actionId = randomUUID();
    const m = memberOf(auth);
    const who = m ? { member: await this.memberDetails(tenantId, actionId, m) } : { actor: machineActorOf(auth) };
    await this.recorder.record(
      tenantId,
      controlPlaneRecord(
        { action_id: actionId, agent_id: m ? `member:${m.id}` : machineActorOf(auth), agent_type: m ? 'member' : 'machine', agent_version: '', tool: change.tool, method: change.method, session_id: null },
        { params: {}, decision: 'changed', violations: [], severity: 'none', bundle_revision: 'control-plane', details: { ...who, ...change.details } },
      ),
      'allowed',
      { event: false },
    );
  }
}
