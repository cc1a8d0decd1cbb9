/**
 * The organization's tunnel range (6.3.1: "Organizations (GET, PUT): tunnel
 * range parameter added"): read and changed through the API; a change
 * re-addresses the tunnels (jobs for every device with a tunnel) or is
 * refused with the reason.
 */
import { randomUUID } from "node:crypto";
import { cidrContains, DeviceConfig, type Organization, parseCidr, type Tunnel } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import type { TestDevice } from "../../../test/support/devices.ts";
import { type TestUser, useTestServer } from "../../../test/support/test-server.ts";
import { createTunnels, desiredConfig, type ErrorBody, tunnelBody, wanDevice } from "../../../test/support/tunnels.ts";
import { toJson } from "../../db/json.ts";

type Tenant = TestUser & { orgId: string };

describe("organization tunnel range", () => {
  const t = useTestServer();

  async function network(name: string): Promise<{ tenant: Tenant; devices: TestDevice[]; tunnels: string[] }> {
    const tenant = await t.createTenant(name);
    const devices = [
      await wanDevice(t, { orgId: tenant.orgId }),
      await wanDevice(t, { orgId: tenant.orgId }),
      await wanDevice(t, { orgId: tenant.orgId }),
    ];
    const [a, b, c] = devices as [TestDevice, TestDevice, TestDevice];
    const created = await createTunnels(t, [tunnelBody(a, b), tunnelBody(b, c)], { token: tenant.token });
    return { tenant, devices, tunnels: created.tunnels.map((x) => x.id) };
  }

  const putRange = (tenant: Tenant, tunnelRange: string) =>
    t.api<Organization & { jobIds?: string[] } & ErrorBody>("PUT", `/api/organizations/${tenant.orgId}`, {
      token: tenant.token,
      body: { tunnelRange },
    });

  describe("versioning 6.3.1: the tunnel range parameter of GET and PUT /organizations", () => {
    it("GET returns tunnelRange (default 10.100.0.0/16) in the list and by id; PUT changes it", async () => {
      const list = await t.api<Organization[]>("GET", "/api/organizations", { token: t.admin.token });
      expect(list.body.every((o) => typeof o.tunnelRange === "string")).toBe(true);
      const one = await t.api<Organization>("GET", `/api/organizations/${t.admin.orgId}`, { token: t.admin.token });
      expect(one.body.tunnelRange).toBe("10.100.0.0/16");
      const put = await t.api<Organization>("PUT", `/api/organizations/${t.admin.orgId}`, {
        token: t.admin.token,
        body: { tunnelRange: "10.99.0.0/20" },
      });
      expect(put.status).toBe(200);
      expect(put.body.tunnelRange).toBe("10.99.0.0/20");
      expect(
        (await t.api<Organization>("GET", `/api/organizations/${t.admin.orgId}`, { token: t.admin.token })).body.tunnelRange,
      ).toBe("10.99.0.0/20");
    });
  });

  it("re-addresses the tunnels: same numbers, loopbacks from the new range, organization jobs for every end", async () => {
    const { tenant, devices, tunnels } = await network("Readdress");
    const res = await putRange(tenant, "10.200.0.0/16");
    expect(res.status, res.text).toBe(202);
    expect(res.body.tunnelRange).toBe("10.200.0.0/16");
    expect(res.body.jobIds).toHaveLength(3);
    expect(res.headers.get("location")).toBe(`/api/jobs?ids=${res.body.jobIds!.join(",")}`);
    const jobs = await t.database.db.selectFrom("jobs").selectAll().where("id", "in", res.body.jobIds!).execute();
    expect(jobs.map((j) => j.device_id).sort()).toEqual(devices.map((d) => d.id).sort());
    expect(jobs.every((j) => j.type === "organization")).toBe(true);
    expect(jobs[0]!.tasks).toEqual([
      { kind: "tunnel-range", summary: "tunnel loopbacks move from 10.100.0.0/16 to 10.200.0.0/16" },
    ]);

    const first = await t.api<Tunnel>("GET", `/api/tunnels/${tunnels[0]}`, { token: tenant.token });
    expect(first.body).toMatchObject({ num: 0, loopbackA: "10.200.0.2", loopbackB: "10.200.0.3" });
    const middle = DeviceConfig.parse(await desiredConfig(t, devices[1]!.id));
    expect(middle.tunnels.map((x) => [x.num, x.localLoopback, x.remoteLoopback])).toEqual([
      [0, "10.200.0.3", "10.200.0.2"],
      [1, "10.200.0.4", "10.200.0.5"],
    ]);
    // Unchanged range: nothing to do.
    const same = await putRange(tenant, "10.200.0.0/16");
    expect(same.status).toBe(200);
    expect(same.body).not.toHaveProperty("jobIds");
  });

  it("refuses a range too small for the tunnel numbers in use (TUNNEL_RANGE_EXHAUSTED)", async () => {
    const { tenant, devices } = await network("Too small");
    const id = randomUUID();
    await t.database.db
      .insertInto("tunnels")
      .values({
        id,
        organization_id: tenant.orgId,
        num: 127,
        device_a: devices[0]!.id,
        interface_a: devices[0]!.wan.id,
        device_b: devices[2]!.id,
        interface_b: devices[2]!.wan.id,
        endpoint_key: "far-number",
        psk_enc: t.deps.keyring.encrypt("secret-127", id),
        notifications: toJson({ rtt: null, dropRate: null }),
      })
      .execute();
    const res = await putRange(tenant, "10.250.0.0/24");
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("TUNNEL_RANGE_EXHAUSTED");
    expect(res.body.error).toContain(
      "10.250.0.0/24 holds 127 tunnels (numbers 0-126); the organization has 3 tunnels and uses number 127",
    );
    expect((await putRange(tenant, "10.250.0.0/23")).status).toBe(202);
  });

  it("refuses a range that overlaps a LAN (LAN_OVERLAPPING) or a WAN subnet, changing nothing", async () => {
    const { tenant, devices } = await network("Overlaps");
    const jobsBefore = (await t.database.db.selectFrom("jobs").select("id").execute()).length;
    const lan = parseCidr(`${devices[0]!.lan.IPv4}/16`)!;
    const lanRange = `${[lan.network >>> 24, (lan.network >>> 16) & 255].join(".")}.0.0/16`;
    const res = await putRange(tenant, lanRange);
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe("LAN_OVERLAPPING");
    expect(res.body.details[0]).toMatchObject({ path: "tunnelRange", message: expect.stringContaining("LAN interface") });
    const wan = await putRange(tenant, `${devices[0]!.wan.IPv4.split(".").slice(0, 3).join(".")}.0/24`);
    expect(wan.status).toBe(400);
    expect(wan.body.code).toBe("VALIDATION_FAILED");
    expect(wan.body.error).toContain("WAN interface");
    const org = await t.api<Organization>("GET", `/api/organizations/${tenant.orgId}`, { token: tenant.token });
    expect(org.body.tunnelRange).toBe("10.100.0.0/16");
    expect((await t.database.db.selectFrom("jobs").select("id").execute()).length).toBe(jobsBefore);
  });

  it("refuses while a static route or BGP neighbour points at a loopback of the current range", async () => {
    const { tenant, devices } = await network("References");
    await t.database.db
      .updateTable("devices")
      .set({ static_routes: toJson([{ destination: "192.0.2.0/24", gateway: "10.100.0.3", ifname: "", metric: 0 }]) })
      .where("id", "=", devices[0]!.id)
      .execute();
    const res = await putRange(tenant, "10.201.0.0/16");
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_FAILED");
    expect(res.body.error).toContain("routes 192.0.2.0/24 via tunnel loopback 10.100.0.3 of the current range");
  });

  it("a range change racing tunnel creations leaves every tunnel addressed from the final range", async () => {
    const tenant = await t.createTenant("Race");
    const hub = await wanDevice(t, { orgId: tenant.orgId });
    const spokes = await Promise.all(Array.from({ length: 4 }, () => wanDevice(t, { orgId: tenant.orgId })));
    const results = await Promise.all([
      ...spokes.slice(0, 2).map((s) => t.api("POST", "/api/tunnels", { token: tenant.token, body: tunnelBody(hub, s) })),
      putRange(tenant, "10.77.0.0/16"),
      ...spokes.slice(2).map((s) => t.api("POST", "/api/tunnels", { token: tenant.token, body: tunnelBody(hub, s) })),
    ]);
    // The range change queues jobs only when it runs after at least one creation: 202 then, 200 before.
    const [c1, c2, range200or202, c3, c4] = results.map((r) => r.status);
    expect([c1, c2, c3, c4]).toEqual([202, 202, 202, 202]);
    expect([200, 202]).toContain(range200or202);
    const range = parseCidr("10.77.0.0/16")!;
    for (const device of [hub, ...spokes]) {
      const config = DeviceConfig.parse(await desiredConfig(t, device.id));
      for (const tunnel of config.tunnels)
        expect(cidrContains(range, parseCidr(`${tunnel.localLoopback}/32`)!.address)).toBe(true);
    }
    expect(DeviceConfig.parse(await desiredConfig(t, hub.id)).tunnels).toHaveLength(4);
  });
});
