/**
 * @module @agw/platform-stand-in
 * A local stand-in of the external agent platform (Claude Managed Agents beta, `managed-agents-2026-04-01`):
 * the real HTTP + SSE API over a real socket, so the official `@anthropic-ai/sdk` works against it
 * unchanged, and a real MCP client of the sessions' remote MCP servers (with the vault's bearer).
 * `npm start` runs it when no ANTHROPIC_API_KEY is set; tests script its sessions through the control
 * API (`/_stand-in`). It is a test double of an external platform, the only one in this project.
 *
 * @example
 * ```ts
 * const platform = await startPlatformStandIn({ apiKey: 'k' });
 * const client = new Anthropic({ apiKey: 'k', baseURL: platform.url });
 * ```
 */
export { type RunningStandIn, type StandInOptions, startPlatformStandIn } from './stand-in.server';
export { BETA } from './platform-api';
export type { PlatformEvent } from './event-log';
export type { InterruptRecord, PlatformState, Session } from './platform-state';
export type { Step, StepResult } from './script-runner';
