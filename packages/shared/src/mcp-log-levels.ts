/**
 * MCP's log levels (`notifications/message`, `logging/setLevel`, a tools/call's asked level): the one list
 * the gateway (what a client asks for) and the vault (what an upstream's log message is relayed at) check.
 */

/** MCP's log levels, least severe first (RFC 5424 as the spec names them). */
export const MCP_LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type McpLogLevel = (typeof MCP_LOG_LEVELS)[number];
export const isMcpLogLevel = (v: unknown): v is McpLogLevel => typeof v === 'string' && (MCP_LOG_LEVELS as readonly string[]).includes(v);
