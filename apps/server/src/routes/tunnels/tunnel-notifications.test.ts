/** PUT /api/tunnels/notifications: per-tunnel RTT and drop-rate thresholds for tunnels chosen by ids or filter. */
import type { Tunnel } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestDevice } from "../../../test/support/devices.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { createTunnels, type ErrorBody, getTunnel, tunnelBody, wanDevice } from "../../../test/support/tunnels.ts";

describe("PUT /api/tunnels/notifications", () => {
  const t = useTestServer();
  let a: TestDevice;
  let b: TestDevice;
  let c: TestDevice;
  let ids: string[];
  const put = (body: unknown) =>
    t.api<{ ids: string[] } & ErrorBody>("PUT", "/api/tunnels/notifications", { token: t.admin.token, body });

  beforeAll(async () => {
    a = await wanDevice(t, { name: "n-a" });
    b = await wanDevice(t, { name: "n-b" });
    c = await wanDevice(t, { name: "n-c" });
    ids = (await createTunnels(t, [tunnelBody(a, b), tunnelBody(a, c), tunnelBody(b, c)])).tunnels.map((x) => x.id);
  });

  it("sets thresholds on the tunnels given by id, returned in each tunnel's notifications", async () => {
    const notifications = { rtt: { warning: 150, critical: 400 }, dropRate: { warning: 2, critical: 10 } };
    const jobCount = async () => (await t.database.db.selectFrom("jobs").select("id").execute()).length;
    const jobsBefore = await jobCount();
    const res = await put({ ids: [ids[0]], notifications });
    expect(res.status, res.text).toBe(200);
    expect(res.body.ids).toEqual([ids[0]]);
    expect((await getTunnel(t, ids[0]!)).notifications).toEqual(notifications);
    expect((await getTunnel(t, ids[1]!)).notifications).toEqual({ rtt: null, dropRate: null });
    // No device work: thresholds are the server's business.
    expect(await jobCount()).toBe(jobsBefore);
  });

  it("sets thresholds on the tunnels matching a filter; null resets to the organization's rules", async () => {
    const res = await put({
      filter: [{ key: "device.name", op: "==", val: "n-c" }],
      notifications: { rtt: { warning: 300, critical: 300 } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.ids.sort()).toEqual([ids[1], ids[2]].sort());
    const list = await t.api<Tunnel[]>("GET", "/api/tunnels", { token: t.admin.token });
    const byId = new Map(list.body.map((x) => [x.id, x.notifications]));
    expect(byId.get(ids[1]!)).toEqual({ rtt: { warning: 300, critical: 300 }, dropRate: null });
    expect(byId.get(ids[0]!)?.rtt).toEqual({ warning: 150, critical: 400 });

    const reset = await put({ ids: [ids[0]], notifications: { rtt: null, dropRate: null } });
    expect(reset.status).toBe(200);
    expect((await getTunnel(t, ids[0]!)).notifications).toEqual({ rtt: null, dropRate: null });
  });

  it("ids and filter together select the tunnels matching both", async () => {
    const res = await put({
      ids: [ids[0], ids[1]],
      filter: [{ key: "deviceB.name", op: "==", val: "n-c" }],
      notifications: { dropRate: { warning: 1, critical: 5 } },
    });
    expect(res.body.ids).toEqual([ids[1]]);
  });

  it("refuses warning above critical, values out of range, and a body without selection", async () => {
    for (const [body, path] of [
      [{ ids: [ids[0]], notifications: { rtt: { warning: 500, critical: 100 } } }, "notifications.rtt.warning"],
      [{ ids: [ids[0]], notifications: { dropRate: { warning: 30, critical: 20 } } }, "notifications.dropRate.warning"],
      [{ ids: [ids[0]], notifications: { dropRate: { warning: 1, critical: 101 } } }, "notifications.dropRate.critical"],
      [{ ids: [ids[0]], notifications: { rtt: { warning: 0, critical: 10 } } }, "notifications.rtt.warning"],
      [{ notifications: {} }, "ids"],
      [{ ids: ["nope"], notifications: {} }, "ids.0"],
      [{ filter: [{ key: "psk", op: "==", val: 1 }], notifications: {} }, "filter.0.key"],
    ] as const) {
      const res = await put(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details.map((d) => d.path)).toContain(path);
    }
  });

  it("refuses unknown ids (also another organization's) with NOT_FOUND, changing nothing", async () => {
    const other = await t.createTenant("Thresholds elsewhere");
    const res = await t.api<ErrorBody>("PUT", "/api/tunnels/notifications", {
      token: other.token,
      body: { ids: [ids[2]], notifications: { rtt: { warning: 1, critical: 2 } } },
    });
    expect(res.status).toBe(404);
    expect(res.body.details).toEqual([{ path: "ids.0", message: `tunnel ${ids[2]} not found` }]);
    expect((await getTunnel(t, ids[2]!)).notifications.rtt).toEqual({ warning: 300, critical: 300 });
  });

  it("selects by an end's interface name", async () => {
    // Interface names are the only keys read from the ends' interfaces: the selection reads them for these alone.
    const matching = await put({
      ids: [ids[2]],
      filter: [{ key: "interfaceA.name", op: "==", val: b.wan.name }],
      notifications: { dropRate: { warning: 3, critical: 6 } },
    });
    expect(matching.status, matching.text).toBe(200);
    expect(matching.body.ids).toEqual([ids[2]]);
    const none = await put({
      filter: [{ key: "interfaceB.name", op: "==", val: "no-such-interface" }],
      notifications: { dropRate: { warning: 3, critical: 6 } },
    });
    expect(none.body.ids).toEqual([]);
  });
});
