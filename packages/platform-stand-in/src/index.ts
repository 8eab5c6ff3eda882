/**
 * @module @agw/platform-stand-in
 * A local stand-in of the external agent platform (Claude Managed Agents beta, `managed-agents-2026-04-01`):
 * the real HTTP + SSE API over a real socket, so the official `@anthropic-ai/sdk` works against it
 * unchanged, and a real MCP client of the sessions' remote MCP servers. `npm start` runs it when no
 * ANTHROPIC_API_KEY is set; the tests script its sessions through the control API (`/_stand-in`).
 *
 * @example
 * ```ts
 * const platform = await startPlatformStandIn({ apiKey: 'k' });
 * const client = new Anthropic({ apiKey: 'k', baseURL: platform.url });
 * ```
 */
export { BETA, type RunningStandIn, type StandInOptions, startPlatformStandIn } from './stand-in';
export type { PlatformEvent } from './session-log';
export type { Step } from './script-runner';
