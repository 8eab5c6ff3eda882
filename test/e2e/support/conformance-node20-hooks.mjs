// Module hook of conformance-node20.mjs: in the conformance bundle only, `globSync` is imported from `glob`
// instead of `fs` (the rest of that import stays as it is).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const globUrl = pathToFileURL(createRequire(import.meta.url).resolve('glob')).href;

export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  if (!/\/@modelcontextprotocol\/conformance\/dist\/index\.js$/.test(url)) return loaded;
  const source = String(loaded.source);
  const patched = source.replace(/import\{([^}]*?)\bglobSync as (\w+),?([^}]*)\}from"fs"/, (_m, before, local, after) => `import{globSync as ${local}}from${JSON.stringify(globUrl)};import{${before}${after}}from"fs"`);
  return { ...loaded, source: patched };
}
