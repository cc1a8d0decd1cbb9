/** GET /api/health and /api/version: public. */
import { PROTOCOL_VERSION } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import pkg from "../../../package.json" with { type: "json" };
import { testDatabaseKind } from "../../../test/support/test-database.ts";
import { createTestServer, useTestServer } from "../../../test/support/test-server.ts";

describe("system", () => {
  const t = useTestServer();

  it("GET /api/health reports the database reachable", async () => {
    const res = await t.api("GET", "/api/health");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ok", database: { kind: testDatabaseKind(), reachable: true } });
  });

  it("GET /api/version reports server, API and protocol versions", async () => {
    const res = await t.api("GET", "/api/version");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ server: pkg.version, api: 1, protocol: PROTOCOL_VERSION });
  });

  it("health says 503 degraded when the database is gone", async () => {
    const server = await createTestServer();
    await server.database.db.destroy();
    const res = await server.api("GET", "/api/health");
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: "degraded", database: { reachable: false } });
    await server.close().catch(() => {});
  });
});
