/**
 * Golden files: each case's compiled DeviceConfig (and warnings) is pinned in
 * golden/. Run with TERN_UPDATE_GOLDEN=1 to rewrite them after an intended
 * change, then review the diff.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileDeviceConfig } from "../../src/compile/index.ts";
import { CASES } from "./cases.ts";

const dir = join(import.meta.dirname, "golden");
const update = process.env.TERN_UPDATE_GOLDEN === "1";

function golden(file: string, value: unknown): void {
  const path = join(dir, file);
  const text = `${JSON.stringify(value, null, 2)}\n`;
  if (update) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, text);
    return;
  }
  if (!existsSync(path)) throw new Error(`missing golden file ${file}: run with TERN_UPDATE_GOLDEN=1 and review it`);
  expect(JSON.parse(text)).toEqual(JSON.parse(readFileSync(path, "utf8")));
}

describe("compileDeviceConfig golden files", () => {
  for (const [name, build] of Object.entries(CASES)) {
    it(name, () => {
      const { config, warnings } = compileDeviceConfig(build());
      golden(`${name}.json`, config);
      golden(`${name}.warnings.json`, warnings);
    });
  }
});
