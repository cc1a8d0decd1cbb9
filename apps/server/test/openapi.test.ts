/** The OpenAPI document: committed file in sync, served at /api/openapi.json, docs at /api/docs, every operation complete. */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { OPENAPI_FILE, openApiText } from "../scripts/openapi.ts";
import { useTestServer } from "./support/test-server.ts";

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { operationId?: string; "x-tern-auth"?: unknown; responses: Record<string, unknown> }>>;
};

describe("OpenAPI document", () => {
  const t = useTestServer();

  it("the committed apps/server/openapi.json matches the routes (run `npm run openapi -w @tern/server` after changing a route)", async () => {
    const committed = await readFile(OPENAPI_FILE, "utf8");
    expect(committed, "apps/server/openapi.json is out of date: run `npm run openapi -w @tern/server`").toBe(openApiText());
  });

  it("is served as OpenAPI 3.1 at /api/openapi.json, equal to the committed one", async () => {
    const res = await t.api<Doc>("GET", "/api/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body).toEqual(JSON.parse(await readFile(OPENAPI_FILE, "utf8")));
  });

  it("every operation has an operationId, an auth declaration and the error body", async () => {
    const doc = JSON.parse(await readFile(OPENAPI_FILE, "utf8")) as Doc;
    const ids = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      expect(path.startsWith("/api/"), path).toBe(true);
      for (const [method, op] of Object.entries(methods)) {
        const label = `${method} ${path}`;
        expect(op.operationId, label).toBeTruthy();
        expect(ids.has(op.operationId!), `duplicate operationId ${op.operationId}`).toBe(false);
        ids.add(op.operationId!);
        expect(op["x-tern-auth"], label).toBeDefined();
        expect(op.responses["500"], label).toBeDefined();
      }
    }
  });

  it("serves interactive docs at /api/docs", async () => {
    const res = await t.api("GET", "/api/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    // No inline script (the strict CSP): the page loads its init script, which points at the document.
    expect(res.text).toContain('<script src="/api/docs/init.js">');
    const init = await t.api("GET", "/api/docs/init.js");
    expect(init.text).toContain("/api/openapi.json");
    expect(init.text).toContain("SwaggerUIBundle");
  });
});
