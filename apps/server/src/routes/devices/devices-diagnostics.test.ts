/**
 * POST /api/devices/{id}/diagnostics/{ping|traceroute|dns} and GET /logs:
 * permissions, tenancy, validation, and the offline device (this server has
 * no gateway: every device is "not connected"). Streaming against a connected
 * device is in test/gateway/device-diagnostics.test.ts.
 */
import type { Job } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; details: { path: string }[] };

describe("device diagnostics routes", () => {
  const t = useTestServer();
  const run = (token: string, id: string, kind: string, body: unknown) =>
    t.api<ErrorBody>("POST", `/api/devices/${id}/diagnostics/${kind}`, { token, body });
  const logs = (token: string, id: string, query: Record<string, string> = {}) =>
    t.api<ErrorBody>("GET", `/api/devices/${id}/logs`, { token, query });

  it("a viewer may ping, trace and resolve (offline device: 409 DEVICE_NOT_CONNECTED, not a hang), not read logs", async () => {
    const device = await insertValidDevice(t);
    const viewer = await t.addMember("viewer");
    for (const [kind, body] of [
      ["ping", { target: "192.0.2.1" }],
      ["traceroute", { target: "2001:db8::1" }],
      ["dns", { name: "example.com", type: "MX" }],
    ] as const) {
      const res = await run(viewer.token, device.id, kind, body);
      expect(res.status, `${kind}: ${res.text}`).toBe(409);
      expect(res.body.code).toBe("DEVICE_NOT_CONNECTED");
    }
    const forbidden = await logs(viewer.token, device.id);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe("FORBIDDEN");
    const manager = await t.addMember("manager");
    const offline = await logs(manager.token, device.id, { lines: "50", level: "warn" });
    expect(offline.status).toBe(409);
    expect(offline.body.code).toBe("DEVICE_NOT_CONNECTED");
  });

  it("another tenant's device is 404, for diagnostics and logs", async () => {
    const device = await insertValidDevice(t);
    const other = await t.createTenant("Other");
    const res = await run(other.token, device.id, "ping", { target: "192.0.2.1" });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("NOT_FOUND");
    const ownOrg = await logs(other.token, device.id);
    expect(ownOrg.status).toBe(404);
    expect(ownOrg.body.code).toBe("NOT_FOUND");
  });

  it("refuses unknown fields, bad targets and options out of bounds with 400 VALIDATION_FAILED naming the field", async () => {
    const device = await insertValidDevice(t);
    for (const [kind, body, path] of [
      ["ping", { target: "192.0.2.1", flood: true }, ""],
      ["ping", { target: "-f" }, "target"],
      ["ping", { target: "192.0.2.1; reboot" }, "target"],
      ["ping", { target: "192.0.2.1", count: 101 }, "count"],
      ["ping", { target: "192.0.2.1", intervalMs: 10 }, "intervalMs"],
      ["ping", { target: "192.0.2.1", source: "-I" }, "source"],
      ["traceroute", { target: "192.0.2.1", maxHops: 65 }, "maxHops"],
      ["dns", { name: "example.com", type: "AXFR" }, "type"],
      ["dns", { name: "example.com", server: "dns.example.com" }, "server"],
    ] as const) {
      const res = await run(t.admin.token, device.id, kind, body);
      expect(res.status, `${kind} ${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      if (path) expect(res.body.details.map((d) => d.path)).toContain(path);
    }
    for (const query of [{ lines: "0" }, { lines: "5001" }, { level: "loud" }] as Record<string, string>[]) {
      const res = await logs(t.admin.token, device.id, query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
  });

  it("audits who ran what against which target and records the failed run as a job", async () => {
    const device = await insertValidDevice(t);
    expect((await run(t.admin.token, device.id, "ping", { target: "192.0.2.7", count: 2 })).status).toBe(409);
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "actor", "resource_id", "after"])
      .where("resource_id", "=", device.id)
      .where("action", "=", "ping")
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor: t.admin.email, after: { target: "192.0.2.7", params: { count: 2 } } });
    const jobId = (audit.after as { jobId: string }).jobId;
    const job = await t.api<Job>("GET", `/api/jobs/${jobId}`, { token: t.admin.token });
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({
      type: "ping",
      state: "failed",
      device: { id: device.id },
      tasks: [{ kind: "ping", summary: expect.stringMatching(/^ping 192\.0\.2\.7 \(count 2/) }],
      error: { reason: "not-connected" },
    });
  });
});
