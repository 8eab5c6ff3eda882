/**
 * Pure helpers of the Tools page (no DOM, no fetch; test/upstreams.test.ts): where the page is, how the
 * tools of an upstream are ordered, and how a definition and a diff value are shown.
 */
import type { Upstream, UpstreamTool } from './wire';

const TOOLS = '/tools';

/** The upstream selected by a console path: `/tools/<name>` → name, `/tools` → null, another page → undefined. */
export function toolsSelection(path: string): string | null | undefined {
  if (path === TOOLS || path === `${TOOLS}/`) return null;
  if (!path.startsWith(`${TOOLS}/`)) return undefined;
  const rest = path.slice(TOOLS.length + 1).split('/')[0];
  try {
    return decodeURIComponent(rest) || null;
  } catch {
    return null; // a malformed escape selects nothing
  }
}

/** The path of the Tools page, with an upstream selected or not. */
export const toolsPath = (upstream?: string | null) => (upstream ? `${TOOLS}/${encodeURIComponent(upstream)}` : TOOLS);

const STATE_ORDER: Record<UpstreamTool['state'], number> = { quarantined: 0, active: 1, absent: 2 };

/** Quarantined tools (waiting for a human, shown on top) and the others (active, then absent), each by name. */
export function splitTools(tools: readonly UpstreamTool[]): { quarantined: UpstreamTool[]; others: UpstreamTool[] } {
  const sorted = [...tools].sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state] || a.name.localeCompare(b.name));
  return { quarantined: sorted.filter((t) => t.state === 'quarantined'), others: sorted.filter((t) => t.state !== 'quarantined') };
}

/** The fields of an MCP tool definition the page shows (a definition is a free-form JSON object on the wire). */
export interface ShownDefinition {
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
}

/** The definition to show for a tool: the pinned one, or the candidate while nothing is pinned yet. */
export function shownDefinition(tool: Pick<UpstreamTool, 'definition' | 'candidate'>): ShownDefinition {
  const d = (tool.definition ?? tool.candidate ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  return { title: text(d.title), description: text(d.description), inputSchema: d.inputSchema, outputSchema: d.outputSchema };
}

/** One side of a changed path: a string as it is (a description reads as text), anything else as pretty JSON, absent as a dash. */
export const diffValue = (v: unknown): string => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v, null, 2));

/** What a quarantine's reason means to the person who decides. */
export function reasonText(reason: string | null): string {
  switch (reason) {
    case 'tool_definition_changed':
      return 'The upstream changed this tool’s definition; calls are refused until a human approves the new one.';
    case 'suspicious_description':
      return 'The scanner flagged this new tool’s definition; it is not listed until a human approves it.';
    case 'approval_required':
      return 'A new tool: it appeared after the upstream was first read (or this tenant approves every new tool by hand, upstream_tool_approval: manual); it is not listed until a human approves it.';
    default:
      return reason ?? '';
  }
}

/** The server line of an upstream: name and version, or where it is when it never answered. */
export const serverLine = (u: Pick<Upstream, 'server' | 'url'>) => (u.server ? `${u.server.name} ${u.server.version}` : u.url);
