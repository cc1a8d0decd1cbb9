import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { takesOrg } from "./org-scope.ts";

type Doc = { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> };

const serverDir = path.dirname(createRequire(import.meta.url).resolve("@tern/server/package.json"));
const doc = JSON.parse(readFileSync(path.join(serverDir, "openapi.json"), "utf8")) as Doc;

describe("takesOrg", () => {
  it("matches the `org` query parameter of every operation of the OpenAPI document", () => {
    const mismatches: string[] = [];
    let operations = 0;
    for (const [p, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        operations++;
        const declared = (op.parameters ?? []).some((x) => x.name === "org" && x.in === "query");
        if (declared !== takesOrg(p)) mismatches.push(`${method.toUpperCase()} ${p}: document ${declared}, client ${!declared}`);
      }
    }
    expect(operations).toBeGreaterThan(50);
    expect(mismatches).toEqual([]);
  });
});
