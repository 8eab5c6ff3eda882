// Runs the official MCP conformance CLI (@modelcontextprotocol/conformance) on Node 20: its bundle imports
// `globSync` from `fs`, which Node 22 added. This module hook hands that one binding from `glob` (the same
// function, npm) to the bundle as it loads; nothing in node_modules is changed. On Node 22+ it does nothing.
//   node --import ./support/conformance-node20.mjs <conformance dist/index.js> server --url … --scenario …
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register('./conformance-node20-hooks.mjs', import.meta.url);
}
