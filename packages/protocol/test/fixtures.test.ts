import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SCHEMAS, type SchemaName } from "../src/index.ts";

const root = join(import.meta.dirname, "..", "fixtures", "v1");

describe("every named schema has fixtures", () => {
  it.each(Object.keys(SCHEMAS))("%s", (name) => {
    expect(readdirSync(root)).toContain(name);
  });
});

for (const dir of readdirSync(root)) {
  const schema = SCHEMAS[dir as SchemaName];
  describe(`fixtures/v1/${dir}`, () => {
    it("names a schema", () => expect(schema).toBeDefined());
    const files = readdirSync(join(root, dir));
    it("has a valid sample", () => expect(files.some((f) => f.startsWith("valid-"))).toBe(true));
    for (const file of files) {
      const data = JSON.parse(readFileSync(join(root, dir, file), "utf8"));
      if (file.startsWith("valid-")) {
        it(`accepts ${file}`, () => {
          const result = schema.safeParse(data);
          expect(result.success ? [] : result.error.issues).toEqual([]);
        });
      } else {
        it(`rejects ${file} at ${data.expectPath}`, () => {
          const result = schema.safeParse(data.value);
          expect(result.success).toBe(false);
          const paths = result.success ? [] : result.error.issues.map((i) => i.path.join("."));
          expect(paths).toContain(data.expectPath);
        });
      }
    }
  });
}
