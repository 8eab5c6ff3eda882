/** The tool call request body, exactly as the spec's field table says. */
import { z } from 'zod';

export const MAX_PARAMS_BYTES = 64 * 1024;

/** true when the JSON text holds a NUL or a lone surrogate, which Postgres jsonb cannot store. */
function hasUnstorableText(json: string): boolean {
  return /\\u0000/.test(json) || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(json);
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
      else if (hasUnstorableText(json)) ctx.addIssue({ code: 'custom', message: 'params must not contain NUL characters or unpaired surrogates' });
    }),
});

export type ToolCallRequest = z.infer<typeof toolCallSchema>;
