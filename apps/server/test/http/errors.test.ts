/** Bad input is a 4xx with the error body, never a 5xx; unexpected errors are a bare INTERNAL. */
import { ErrorBody } from "@tern/protocol";
import { Hono } from "hono";
import { requestId } from "hono/request-id";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/http/env.ts";
import { handleError } from "../../src/http/errors.ts";
import { createTestServer, useTestServer } from "../support/test-server.ts";

const t = useTestServer();
type Body = { error: string; code: string; details: { path: string; message: string }[] };

function expectErrorBody(res: { body: unknown }) {
  expect(ErrorBody.safeParse(res.body).success, JSON.stringify(res.body)).toBe(true);
}

describe("error handling", () => {
  it("malformed JSON → 400 VALIDATION_FAILED", async () => {
    const res = await t.api<Body>("POST", "/api/organizations", { token: t.admin.token, raw: "{not json" });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_FAILED");
    expectErrorBody(res);
  });

  it("a missing body or another content type → 400, never a silently empty body", async () => {
    const none = await t.api<Body>("POST", "/api/organizations", { token: t.admin.token });
    expect(none.status).toBe(400);
    expect(none.body.code).toBe("VALIDATION_FAILED");
    const text = await t.api<Body>("POST", "/api/organizations", {
      token: t.admin.token,
      raw: "name=x",
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(400);
    expect(text.body.code).toBe("VALIDATION_FAILED");
    const wrongShape = await t.api<Body>("POST", "/api/organizations", { token: t.admin.token, body: ["a"] });
    expect(wrongShape.status).toBe(400);
  });

  it("validation details name each bad field with a dotted path", async () => {
    const res = await t.api<Body>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: "", permissions: { devices: 99 } },
    });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d) => d.path).sort()).toEqual(["name", "permissions.devices"]);
  });

  it("an oversized body → 413 PAYLOAD_TOO_LARGE", async () => {
    const small = await createTestServer({ TERN_MAX_BODY_BYTES: "1000" });
    try {
      const res = await small.api<Body>("POST", "/api/organizations", {
        token: small.admin.token,
        body: { name: "x", description: "y".repeat(2000) },
      });
      expect(res.status).toBe(413);
      expect(res.body.code).toBe("PAYLOAD_TOO_LARGE");
      expectErrorBody(res);
    } finally {
      await small.close();
    }
  });

  it("unknown routes and methods → 404 NOT_FOUND with the error body", async () => {
    for (const [method, path] of [
      ["GET", "/api/nope"],
      ["GET", "/nothing-here"],
      ["PATCH", "/api/organizations"],
      ["DELETE", "/api/accounts"],
    ] as const) {
      const res = await t.api<Body>(method, path, { token: t.admin.token });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe("NOT_FOUND");
      expectErrorBody(res);
    }
  });

  it("an unexpected error → 500 INTERNAL with the request id and no internals", async () => {
    const res = await throwing(() => {
      throw new Error("connection string postgres://user:hunter2@db");
    });
    expect(res.status).toBe(500);
    const body = (await res.json()) as Body;
    expect(body.code).toBe("INTERNAL");
    expect(JSON.stringify(body)).not.toContain("hunter2");
    expect(body.error).toContain(res.headers.get("x-request-id")!);
    expect(ErrorBody.safeParse(body).success).toBe(true);
  });

  it("database refusals caused by input are 4xx, not 500", async () => {
    const res = await throwing(() =>
      t.database.db.selectFrom("organizations").selectAll().where("id", "=", "not-a-uuid").execute(),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as Body).code).toBe("VALIDATION_FAILED");
  });
});

/** The app's error wiring (request id, logger, handleError) around a handler that fails. */
async function throwing(fail: () => unknown): Promise<Response> {
  const app = new Hono<AppEnv>();
  app.use("*", requestId());
  app.use("*", async (c, next) => {
    c.set("logger", pino({ level: "silent" }));
    await next();
  });
  app.get("/boom", async () => {
    await fail();
    return new Response("unreachable");
  });
  app.onError(handleError);
  return app.request("/boom");
}
