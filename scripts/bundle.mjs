/**
 * Bundles one app (server or agent) into plain JavaScript in <app>/dist with
 * esbuild, so nothing at run time needs tsx, TypeScript or dev dependencies.
 *
 * Why esbuild itself rather than tsup/tsdown: it is already in the tree (tsx and
 * vite run on it, same version), it is one dependency with no plugins to keep in
 * step, and what we need from it is small: ESM out, code splitting (the agent's
 * commands load lazily, so `tern-agent --help` parses only the dispatcher), a
 * few packages left external, linked source maps.
 *
 * Usage: node scripts/bundle.mjs <app dir> <entry…> [--external pkg…] [--minify] [--outdir dir]
 *
 * An entry is a path under <app dir>/src (it comes out at the same place under dist), or `out=path` for one
 * that comes out at dist/<out>.js (esbuild's own notation), such as the embedded database's thread in a bundle
 * of another app (test-harness/src/bench/server/tern-bundle.ts).
 *
 * TERN_PACKAGE_VERSION (as packaging/build-debs.sh takes it) replaces the app's package.json version in the
 * bundle, so a package built for another version reports that version (packaging/agent-package.mjs builds agent
 * upgrade packages this way). --outdir: bundle there instead of <app dir>/dist.
 *
 * --minify (the agent and the server): whitespace and syntax only, names kept. It drops the comments, and with
 * them the few non-ASCII characters ("…", "→") that made V8 hold a whole chunk's source as two-byte text: the
 * idle agent kept 3.4 MiB of bundle source in its heap, 1.7 MiB after (agent-footprint bench, docs/bench.md);
 * the idle server 12.5 MiB, 4.3 MiB after.
 */
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    external: { type: "string", multiple: true, default: [] },
    minify: { type: "boolean", default: false },
    outdir: { type: "string" },
  },
});
const [appDir, ...entries] = positionals;
if (!appDir || entries.length === 0) {
  console.error("usage: node scripts/bundle.mjs <app dir> <entry…> [--external pkg…] [--minify]");
  process.exit(2);
}
const root = path.resolve(appDir);
const outdir = values.outdir ? path.resolve(values.outdir) : path.join(root, "dist");
const versionOverride = process.env.TERN_PACKAGE_VERSION || undefined;
/** The app's own package.json with its version replaced (TERN_PACKAGE_VERSION). */
const versionPlugin = {
  name: "tern-package-version",
  setup(b) {
    const own = path.join(root, "package.json");
    b.onLoad({ filter: /package\.json$/ }, async (args) => {
      if (!versionOverride || path.resolve(args.path) !== own) return undefined;
      const pkg = JSON.parse(await readFile(own, "utf8"));
      return { contents: JSON.stringify({ ...pkg, version: versionOverride }), loader: "json" };
    });
  },
};
// An entry listed but not (yet) present is skipped: the server's admin CLI (src/cli.ts) lands separately.
const entryPoints = entries
  .map((e) => (e.includes("=") ? { out: e.slice(0, e.indexOf("=")), in: e.slice(e.indexOf("=") + 1) } : e))
  .filter((e) => existsSync(path.join(root, typeof e === "string" ? e : e.in)));
const present = entryPoints.map((e) => (typeof e === "string" ? e : e.in));

await rm(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints,
  outdir,
  outbase: "src",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // Stack traces point at the TypeScript (node --enable-source-maps); the sources themselves stay out of the
  // maps, which keeps them small: node reads a bundle's map when it loads the bundle.
  sourcemap: "linked",
  sourcesContent: false,
  minifyWhitespace: values.minify,
  minifySyntax: values.minify,
  chunkNames: "chunks/[name]-[hash]",
  // Optional native helpers of ws and pg, loaded in try/catch or only on request; absent is fine.
  external: ["bufferutil", "utf-8-validate", "pg-native", ...values.external],
  // CommonJS dependencies (pino, prom-client …) call require() for Node's own modules; ESM has none.
  banner: {
    js: 'import { createRequire as __ternCreateRequire } from "node:module"; const require = __ternCreateRequire(import.meta.url);',
  },
  legalComments: "linked",
  metafile: true,
  plugins: [versionPlugin],
  logLevel: "warning",
});
await writeFile(path.join(outdir, "meta.json"), JSON.stringify(result.metafile));
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`${path.basename(root)}: ${present.join(", ")} → dist/ (${(bytes / 2 ** 20).toFixed(1)} MiB with maps)`);
