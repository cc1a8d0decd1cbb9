/** The client's core is imported by a browser console too: no Node built-ins, no Node globals. */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";

it("src/ uses no Node-only module or global", async () => {
  const src = path.resolve(import.meta.dirname, "../src");
  const files = (await readdir(src)).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
  expect(files.length).toBeGreaterThan(5);
  const offenders: string[] = [];
  for (const f of files) {
    const text = await readFile(path.join(src, f), "utf8");
    for (const pattern of [
      /from\s+["']node:/,
      /\bprocess\./,
      /\bBuffer\./,
      /\brequire\(/,
      /from\s+["'](fs|path|os|http|https)["']/,
    ]) {
      if (pattern.test(text)) offenders.push(`${f}: ${pattern}`);
    }
  }
  expect(offenders).toEqual([]);
});
