/** The input guard of every route: unknown fields, the one JSON body parser, NUL characters, depth, __proto__. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/http/input/json-body.ts";
import { useTestServer } from "../support/test-server.ts";

type Body = { error: string; code: string; details: { path: string; message: string }[] };
const t = useTestServer();

const call = (method: string, path: string, options: Parameters<typeof t.api>[2] = {}) =>
  t.api<Body>(method, path, { token: t.admin.token, ...options });

async function expect400(res: { status: number; body: Body }, path: string, message: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe("VALIDATION_FAILED");
  const detail = res.body.details.find((d) => d.path === path);
  expect(detail, JSON.stringify(res.body.details)).toBeDefined();
  expect(detail!.message).toMatch(message);
}

describe("unknown fields", () => {
  it("a misspelled nested field is refused naming it and the closest known one; nothing is stored", async () => {
    const label = await call("POST", "/api/pathlabels", { body: { name: "guard-mpls" } });
    const rule = (linkQuality: Record<string, number>) => ({
      name: "voice",
      priority: 1,
      match: {},
      action: { order: "link-quality", pathlabels: [(label.body as unknown as { id: string }).id], linkQuality },
    });
    const res = await call("POST", "/api/mlpolicies", { body: { name: "guarded", rules: [rule({ maxLossPct: 2 })] } });
    await expect400(res, "rules.0.action.linkQuality.maxLossPct", /^unknown field maxLossPct; did you mean maxLossPercent\?$/);
    const list = await call("GET", "/api/mlpolicies", {
      query: { filter: JSON.stringify([{ key: "name", op: "==", val: "guarded" }]) },
    });
    expect(list.body).toEqual([]);
    const ok = await call("POST", "/api/mlpolicies", { body: { name: "guarded", rules: [rule({ maxLossPercent: 2 })] } });
    expect(ok.status).toBe(201);
  });

  it("top-level body fields and query parameters too; a far-off name gets no suggestion", async () => {
    await expect400(await call("POST", "/api/organizations", { body: { nmae: "x" } }), "nmae", /did you mean name\?/);
    await expect400(await call("GET", "/api/organizations", { query: { limt: 5 } }), "limt", /did you mean limit\?/);
    await expect400(await call("GET", "/api/organizations", { query: { zzzzzzzz: 1 } }), "zzzzzzzz", /^unknown field zzzzzzzz$/);
  });

  it("keys of Object.prototype are unknown fields, and __proto__ pollutes nothing", async () => {
    await expect400(
      await call("POST", "/api/organizations", { body: { name: "x", constructor: 1 } }),
      "constructor",
      /unknown field/,
    );
    const proto = await call("POST", "/api/organizations", { raw: '{"name":"x","__proto__":{"polluted":true}}' });
    await expect400(proto, "__proto__", /not allowed/);
    const nested = await call("POST", "/api/accesstokens", { raw: '{"name":"x","permissions":{"__proto__":{"isAdmin":true}}}' });
    await expect400(nested, "permissions.__proto__", /not allowed/);
    const query = await t.api<Body>("GET", "/api/organizations?__proto__=1", { token: t.admin.token });
    expect(query.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });
});

describe("the shared body parser", () => {
  it("a required body that is missing is a 400, not a 500 (PUT /devices/{id} once answered 'Unexpected end of JSON input')", async () => {
    const res = await call("PUT", `/api/devices/${randomUUID()}`);
    await expect400(res, "body", /JSON body is required/);
    await expect400(await call("PUT", `/api/devices/${randomUUID()}`, { raw: "  " }), "body", /required/);
  });

  it("invalid JSON, and a body with another content type or none, are 400s naming the body", async () => {
    await expect400(await call("POST", "/api/organizations", { raw: '{"name": ' }), "body", /not valid JSON/);
    const text = await call("POST", "/api/organizations", { raw: '{"name":"x"}', headers: { "content-type": "text/plain" } });
    await expect400(text, "body", /Content-Type: application\/json/);
    const form = await call("POST", "/api/organizations", {
      raw: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    await expect400(form, "body", /Content-Type/);
  });

  it("a NUL character in a body string, a field name, a query value or a path parameter is a 400 naming it", async () => {
    await expect400(await call("POST", "/api/organizations", { body: { name: "a\u0000b" } }), "name", /NUL/);
    await expect400(await call("POST", "/api/organizations", { body: { name: "x", tags: ["ok", "b\u0000"] } }), "tags.1", /NUL/);
    await expect400(await call("GET", "/api/organizations", { query: { sort: "na\u0000me" } }), "sort", /NUL/);
    const param = await t.api<Body>("GET", "/api/devices/ab%00cd", { token: t.admin.token });
    expect(param.status).toBe(400);
    expect(param.body.code).toBe("VALIDATION_FAILED");
  });

  it(`nesting deeper than ${MAX_JSON_DEPTH} levels is a 400, even 100,000 levels`, async () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
      const raw = `{"name":"x","description":${"[".repeat(depth)}${"]".repeat(depth)}}`;
      const res = await call("POST", "/api/organizations", { raw });
      expect(res.status, res.text.slice(0, 200)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
  });
});
