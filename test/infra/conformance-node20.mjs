// Loads @modelcontextprotocol/conformance on Node 20: its CLI imports fs.globSync (Node 22) for one report; this
// load hook gives it a small stand-in (a recursive readdir filtered by file name), the only change to its code.
// Used as `node --import ./test/infra/conformance-node20.mjs <conformance>/dist/index.js …`.
import { register } from 'node:module';

if (!('globSync' in (await import('node:fs')))) register(import.meta.url, import.meta.url);

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (!url.includes('/@modelcontextprotocol/conformance/dist/')) return result;
  let name;
  let source = String(result.source).replace(/globSync as (\w+),/, (_match, local) => {
    name = local;
    return '';
  });
  if (name) {
    const standIn =
      `import { readdirSync as __readdir } from 'node:fs';` +
      `const ${name} = (pattern, { cwd }) => __readdir(cwd, { recursive: true }).filter((f) => f.endsWith(pattern.replace('**/', '')));`;
    source = source.replace(/^(#!.*\n)?/, (shebang) => `${shebang}${standIn}\n`);
  }
  return { ...result, source, format: 'module' };
}
