/**
 * POST /api/devices/diagnostics (and the device cap of POST /api/devices/dumps):
 * who may run it, tenancy, validation and the cap on devices. This server has no gateway, so every device is offline: the
 * stream says so per device. Streaming from connected devices is in
 * test/gateway/devices-diagnostics-many.test.ts.
 */
import { MAX_DIAGNOSTIC_DEVICES } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; details: { path: string }[] };

describe("POST /api/devices/diagnostics", () => {
  const t = useTestServer();
  const run = (token: string, body: unknown) => t.api<ErrorBody>("POST", "/api/devices/diagnostics", { token, body });
  const events = (text: string) =>
    text
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>);

  it("a viewer may run it by tag; offline devices each get DEVICE_NOT_CONNECTED in the stream, then a summary", async () => {
    const a = await insertValidDevice(t);
    const b = await insertValidDevice(t);
    await insertValidDevice(t);
    const tagged = await t.api("POST", "/api/devices/tags", {
      token: t.admin.token,
      body: { deviceIds: [a.id, b.id], add: ["branch"], remove: [] },
    });
    expect(tagged.status, tagged.text).toBe(200);
    const viewer = await t.addMember("viewer");
    // t.api does not read event streams (they may not end): this one ends, so it is read whole.
    const res = await t.app.request("/api/devices/diagnostics", {
      method: "POST",
      headers: { authorization: `Bearer ${viewer.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        kind: "dns",
        params: { name: "example.com" },
        filter: [{ key: "tags", op: "contains", val: "branch" }],
      }),
    });
    expect(res.status).toBe(200);
    const all = events(await res.text());
    expect(all.filter((e) => e.type === "error").map((e) => [e.deviceId, e.code])).toEqual(
      expect.arrayContaining([
        [a.id, "DEVICE_NOT_CONNECTED"],
        [b.id, "DEVICE_NOT_CONNECTED"],
      ]),
    );
    expect(all.at(-1)).toEqual({ type: "summary", devices: 2, succeeded: 0, failed: 2, cancelled: 0 });
  });

  it("another tenant's device is 404 naming it, nothing runs", async () => {
    const device = await insertValidDevice(t);
    const other = await t.createTenant("Other");
    const res = await run(other.token, { kind: "ping", params: { target: "192.0.2.1" }, deviceIds: [device.id] });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("NOT_FOUND");
    const audit = await t.database.db.selectFrom("audit_log").select("id").where("resource_id", "=", device.id).execute();
    expect(audit).toEqual([]);
  });

  it("refuses unknown fields, bad params, both or no selection, and an empty selection with 400 VALIDATION_FAILED", async () => {
    const device = await insertValidDevice(t);
    for (const body of [
      { kind: "ping", params: { target: "192.0.2.1", flood: true }, deviceIds: [device.id] },
      { kind: "ping", params: { target: "-f" }, deviceIds: [device.id] },
      { kind: "ping", params: { target: "192.0.2.1" }, deviceIds: [device.id], extra: 1 },
      { kind: "reboot", params: {}, deviceIds: [device.id] },
      { kind: "ping", params: { target: "192.0.2.1" }, deviceIds: [device.id], filter: [] },
      { kind: "ping", params: { target: "192.0.2.1" } },
      { kind: "ping", params: { target: "192.0.2.1" }, filter: [{ key: "tags", op: "contains", val: "nowhere" }] },
    ]) {
      const res = await run(t.admin.token, body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
  });

  it(`more than ${MAX_DIAGNOSTIC_DEVICES} devices is 400 DIAGNOSTIC_TOO_MANY_DEVICES before anything runs`, async () => {
    for (let i = 0; i <= MAX_DIAGNOSTIC_DEVICES; i++) await insertValidDevice(t);
    const res = await run(t.admin.token, { kind: "ping", params: { target: "192.0.2.1" }, filter: [] });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe("DIAGNOSTIC_TOO_MANY_DEVICES");
    const audit = await t.database.db.selectFrom("audit_log").select("id").where("action", "=", "ping").execute();
    expect(audit).toEqual([]);
    // The same cap for dumps asked of many devices (POST /api/devices/dumps).
    const dumps = await t.api<ErrorBody>("POST", "/api/devices/dumps", { token: t.admin.token, body: { filter: [] } });
    expect(dumps.status, dumps.text).toBe(400);
    expect(dumps.body.code).toBe("DIAGNOSTIC_TOO_MANY_DEVICES");
    expect(await t.database.db.selectFrom("device_dumps").select("id").execute()).toEqual([]);
  });
});
