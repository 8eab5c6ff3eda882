/**
 * @module @agw/mcp-fixtures
 * MCP servers of the project's own for the tests of federation (docs/federation.md): what no real server
 * does on command. Real upstreams in the tests are real third-party servers; these cover the rest.
 *
 * @example
 * ```ts
 * const fx = await startFixtures({ port: 0 });
 * // fx.url + '/mutable/mcp', '/secured/mcp', '/huge/mcp', '/silent/mcp', '/endless/mcp', '/malformed/mcp',
 * // '/garbage/mcp', '/many/mcp', '/poisoned/mcp', '/legacy/sse'; '/control/*' drives them
 * await fx.close();
 *
 * // one hostile upstream at `<url>/mcp` (hostile-server.ts), driven by its handle or /control/*
 * const up = await startHostileUpstream({ label: 'evil', config: { tools: [{ kind: 'echo_headers' }, { kind: 'homoglyph' }] } });
 * await up.configure({ tools: [{ kind: 'huge', count: 10 }] }); // announced with tools/list_changed
 * await up.flood({ count: 200, intervalMs: 5 });
 * up.stats().listings; // reads of the tool list
 * await up.close();
 *
 * // the real reference server (npm @modelcontextprotocol/server-everything) on a free port
 * const everything = await startServerEverything(); // everything.url ends in /mcp
 * await everything.close();
 * ```
 */
export * from './fixture-server';
export { FIXTURE_CLIENT } from './oauth-token';
export { HUGE_BYTES, MANY_TOOLS, POISONED_ADD_DESCRIPTION } from './fixture-tools';
export * from './hostile-server';
export * from './reference-server';
export {
  ECHO_MODES,
  type EchoMode,
  HOMOGLYPH_DESCRIPTION,
  SMUGGLED_INSTRUCTION,
  type ToolSpec,
  VARIATION_SELECTOR_DESCRIPTION,
  headerForms,
  headerFormsText,
  revealVariationSelectors,
  smuggleInVariationSelectors,
  unicodeEscape,
} from './hostile-tools';
export * from './oauth-upstream';
export * from './modern-server';
