#!/usr/bin/env node
/**
 * The initial-JavaScript budget of the console (issue 15: ≤ 250 KB gzipped):
 * after `vite build`, sums the gzipped size of the entry chunk and every chunk
 * it imports statically (what the browser must load before the first page
 * shows; lazy pages are dynamic imports and not counted), prints the figure
 * and fails when it is over budget.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const BUDGET_BYTES = 250 * 1024;
const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist");
const manifest = JSON.parse(readFileSync(path.join(dist, ".vite", "manifest.json"), "utf8"));

const initial = new Set();
const visit = (key) => {
  const chunk = manifest[key];
  if (!chunk || initial.has(chunk.file)) return;
  initial.add(chunk.file);
  for (const imported of chunk.imports ?? []) visit(imported);
};
for (const [key, chunk] of Object.entries(manifest)) if (chunk.isEntry) visit(key);

let total = 0;
for (const file of initial) {
  if (!file.endsWith(".js")) continue;
  const size = gzipSync(readFileSync(path.join(dist, file)), { level: 9 }).length;
  total += size;
  console.log(`  ${file}: ${(size / 1024).toFixed(1)} KB gzipped`);
}
const figure = `initial JavaScript: ${(total / 1024).toFixed(1)} KB gzipped (budget ${BUDGET_BYTES / 1024} KB)`;
if (total > BUDGET_BYTES) {
  console.error(`over budget: ${figure}`);
  process.exit(1);
}
console.log(figure);
