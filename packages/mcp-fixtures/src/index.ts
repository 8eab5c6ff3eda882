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
 * ```
 */
export * from './fixture-server';
export { FIXTURE_CLIENT } from './oauth-token';
export { HUGE_BYTES, MANY_TOOLS, POISONED_ADD_DESCRIPTION } from './fixture-tools';
