/** The tool call request body, exactly as the spec's field table says. */
import { z } from 'zod';

export const MAX_PARAMS_BYTES = 64 * 1024;

/** true when a string (key or value) holds a NUL or a lone surrogate, which Postgres jsonb cannot store. */
function hasUnstorableText(v: unknown): boolean {
  const bad = (s: string) => s.includes('\u0000') || !(s as string & { isWellFormed(): boolean }).isWellFormed();
  if (typeof v === 'string') return bad(v);
  if (Array.isArray(v)) return v.some(hasUnstorableText);
  if (v && typeof v === 'object') return Object.entries(v).some(([k, x]) => bad(k) || hasUnstorableText(x));
  return false;
}

export const toolCallSchema = z.object({
  agent_id: z.string().min(1).max(256).regex(/^[a-zA-Z0-9._-]+$/, 'agent_id may contain only letters, digits, ".", "_" and "-"'),
  agent_type: z.string().min(1).max(128),
  agent_version: z.string().max(128).regex(/^\d+\.\d+\.\d+.*$/, 'agent_version must be a semantic version such as 1.2.3'),
  tool: z.string().min(1).max(256),
  method: z.string().min(1).max(256),
  params: z
    .record(z.string(), z.unknown())
    .superRefine((p, ctx) => {
      const json = JSON.stringify(p);
      const bytes = Buffer.byteLength(json, 'utf8');
      if (bytes > MAX_PARAMS_BYTES) ctx.addIssue({ code: 'custom', message: `params must be at most 64KB of JSON (got ${bytes} bytes)`, params: { type: 'too_big' } });
      else if (hasUnstorableText(p)) ctx.addIssue({ code: 'custom', message: 'params must not contain NUL characters or unpaired surrogates' });
    }),
  /**
   * The agent's retry of an action a human approved (agent_direct): allowed once without a new evaluation
   * when tool, method, agent and params are those approved; otherwise the call is evaluated as a new one.
   */
  approved_action_id: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'approved_action_id must be the action_id (UUID) of the approved action')
    .transform((s) => s.toLowerCase())
    .optional(),
});

export type ToolCallRequest = z.infer<typeof toolCallSchema>;
