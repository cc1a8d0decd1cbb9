// Bundles the CLI into one ES module, dist/tern.mjs (with a source map), so an
// installed `tern` starts without tsx or TypeScript. bin/tern prefers it.
// Usage: node scripts/build.mjs [outfile]
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

export async function buildCli(outfile = path.join(root, "dist/tern.mjs")) {
  await build({
    entryPoints: [path.join(root, "src/main.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    logLevel: "warning",
    // Some dependencies are CommonJS and require() Node's modules: give the ES module a require.
    banner: {
      js: 'import { createRequire as __ternRequire } from "node:module"; const require = __ternRequire(import.meta.url);',
    },
  });
  return outfile;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const out = await buildCli(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
  console.log(`built ${path.relative(process.cwd(), out)}`);
}
