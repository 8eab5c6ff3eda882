/**
 * The roles of a tenant's members (docs/auth.md, "Members, invitations and roles"): what a member is. Who may
 * call what with each role is the HTTP layer's table (http/permissions.ts), which builds on this list.
 */
export const ROLES = ['owner', 'admin', 'policy_author', 'approver', 'auditor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
