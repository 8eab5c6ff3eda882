/**
 * The governance instructions injected into every managed session's system prompt, and the SHA-256 of
 * the result (`system_prompt_hash`, kept on the session and in its `control_plane` audit record), so an
 * auditor can prove which instructions a session ran under.
 */
import { sha256Hex } from '@agw/shared';

export interface GovernanceContext {
  sessionId: string;
  configName: string;
  allowedTools: string[];
  requireHumanApproval: string[];
  maxSessionHours: number;
  mcpServerName: string;
}

export function governanceInstructions(c: GovernanceContext): string {
  const tools = c.allowedTools.length ? c.allowedTools.join(', ') : '(none)';
  const approval = c.requireHumanApproval.length ? c.requireHumanApproval.join(', ') : '(none)';
  return [
    '## Governance (injected by the Agent Governance Gateway; these rules take precedence)',
    `- Session ${c.sessionId} of agent "${c.configName}" is supervised: every action is recorded in a tamper-evident audit log.`,
    `- Use the governed tools of the MCP server "${c.mcpServerName}" for actions on external systems: ${tools}.`,
    `- Calls matching these patterns wait for a human approval: ${approval}. A queued call answers with an action id; do not retry it, do not work around it.`,
    '- A denied call is final. Do not try another tool, encoding or path to reach the same effect.',
    '- Built-in tools (shell, files, web) are observed and scored for anomalies; destructive commands, credential access and unexpected network access interrupt the session.',
    `- The session ends after at most ${c.maxSessionHours} hours.`,
  ].join('\n');
}

/** The config's base prompt followed by the governance instructions. */
export function governedSystemPrompt(basePrompt: string | null, c: GovernanceContext): string {
  const governance = governanceInstructions(c);
  return basePrompt?.trim() ? `${basePrompt.trim()}\n\n${governance}` : governance;
}

export function promptHash(prompt: string): string {
  return sha256Hex(prompt);
}
