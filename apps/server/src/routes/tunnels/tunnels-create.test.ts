/** POST /api/tunnels: numbers, loopbacks, per-tunnel PSK, both ends' desired configs, validation, overlap, exhaustion. */
import { randomUUID } from "node:crypto";
import { DeviceConfig, type TunnelsCreated } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";
import {
  createPeer,
  createTunnels,
  desiredConfig,
  type ErrorBody,
  getTunnel,
  peerTunnelBody,
  tunnelBody,
  wanDevice,
} from "../../../test/support/tunnels.ts";
import { toJson } from "../../db/json.ts";

describe("POST /api/tunnels", () => {
  const t = useTestServer();

  it("creates a device-to-device tunnel: number, loopbacks, encrypted PSK, both ends compiled, jobs queued", async () => {
    const a = await wanDevice(t, { name: "hq" });
    const b = await wanDevice(t, { name: "branch" });
    const res = await t.api<TunnelsCreated>("POST", "/api/tunnels", {
      token: t.admin.token,
      body: tunnelBody(a, b, { description: "hq to branch" }),
    });
    expect(res.status, res.text).toBe(202);
    const [created] = res.body.tunnels;
    expect(created).toMatchObject({ num: 0, loopbackA: "10.100.0.2", loopbackB: "10.100.0.3" });
    expect(res.body.jobIds).toHaveLength(2);
    expect(res.headers.get("location")).toBe(`/api/jobs?ids=${res.body.jobIds.join(",")}`);

    const jobs = await t.database.db.selectFrom("jobs").selectAll().where("id", "in", res.body.jobIds).execute();
    expect(jobs.map((j) => j.device_id).sort()).toEqual([a.id, b.id].sort());
    for (const job of jobs) {
      expect(job).toMatchObject({ type: "tunnels", state: "queued" });
      expect(job.tasks).toEqual([{ kind: "add-tunnel", summary: `tunnel 0: hq ${a.wan.name} ↔ branch ${b.wan.name}` }]);
    }

    // Both ends' stored desired configs carry the tunnel, mirrored, with the same per-tunnel PSK.
    const configA = DeviceConfig.parse(await desiredConfig(t, a.id));
    const configB = DeviceConfig.parse(await desiredConfig(t, b.id));
    const endA = configA.tunnels.find((x) => x.id === created!.id)!;
    const endB = configB.tunnels.find((x) => x.id === created!.id)!;
    expect(endA).toMatchObject({ kind: "device", num: 0, localLoopback: "10.100.0.2", remoteLoopback: "10.100.0.3" });
    expect(endA).toMatchObject({ localAddress: a.wan.IPv4, remoteAddress: b.wan.IPv4, initiator: true });
    expect(endB).toMatchObject({ localLoopback: "10.100.0.3", remoteLoopback: "10.100.0.2", initiator: false });
    expect(endA.auth.psk).toBe(endB.auth.psk);
    expect(endA.auth.psk.length).toBeGreaterThanOrEqual(43);
    expect(jobs.find((j) => j.device_id === a.id)?.target_hash).toBe(
      (await t.database.db.selectFrom("devices").select("desired_hash").where("id", "=", a.id).executeTakeFirstOrThrow())
        .desired_hash,
    );

    // At rest the PSK is encrypted, bound to the tunnel's id.
    const row = await t.database.db.selectFrom("tunnels").selectAll().where("id", "=", created!.id).executeTakeFirstOrThrow();
    expect(row.psk_enc).not.toContain(endA.auth.psk);
    expect(t.deps.keyring.decrypt(row.psk_enc!, row.id)).toBe(endA.auth.psk);
    expect(() => t.deps.keyring.decrypt(row.psk_enc!, randomUUID())).toThrow();

    const tunnel = await getTunnel(t, created!.id);
    expect(tunnel).toMatchObject({
      num: 0,
      description: "hq to branch",
      deviceA: { id: a.id, name: "hq", hostname: "hq" },
      interfaceA: { id: a.wan.id, name: a.wan.name, IPv4: a.wan.IPv4 },
      deviceB: { id: b.id, name: "branch" },
      interfaceB: { id: b.wan.id },
      peer: null,
      loopbackA: "10.100.0.2",
      loopbackB: "10.100.0.3",
      tunnelStatus: "Pending",
      status: "N/A",
      isPending: true,
      notifications: { rtt: null, dropRate: null },
      quality: { a: null, b: null },
    });
    expect(tunnel.pendingReason).toBe("waiting for device hq to connect; waiting for device branch to connect");
    expect(JSON.stringify(tunnel)).not.toContain(endA.auth.psk);
  });

  it("creates a peer tunnel: device B and interface B null, one job for the device", async () => {
    const a = await wanDevice(t);
    const peer = await createPeer(t, { name: "aws-vpn" });
    const res = await createTunnels(t, peerTunnelBody(a, peer.id));
    expect(res.jobIds).toHaveLength(1);
    const tunnel = await getTunnel(t, res.tunnels[0]!.id);
    expect(tunnel).toMatchObject({
      deviceB: null,
      interfaceB: null,
      peer: { id: peer.id, name: "aws-vpn", remoteIP: "203.0.113.9" },
    });
    expect(tunnel.tunnelStatusB).toBe("unknown");
    const row = await t.database.db.selectFrom("tunnels").selectAll().where("id", "=", tunnel.id).executeTakeFirstOrThrow();
    expect(row.psk_enc).toBeNull();
    const config = DeviceConfig.parse(await desiredConfig(t, a.id));
    expect(config.tunnels.find((x) => x.id === tunnel.id)).toMatchObject({
      kind: "peer",
      remoteAddress: "203.0.113.9",
      auth: { psk: "peer-secret-0123456789" },
      esp: { pfs: true, lifetimeSeconds: 3600 },
      ike: { lifetimeSeconds: 28800 },
    });
    expect((await t.api<{ tunnels: number }>("GET", `/api/peers/${peer.id}`, { token: t.admin.token })).body.tunnels).toBe(1);
  });

  it("takes the lowest free number, reusing the number of a deleted tunnel", async () => {
    const org = await t.createTenant("Numbers");
    const [a, b, c, d] = [
      await wanDevice(t, { orgId: org.orgId }),
      await wanDevice(t, { orgId: org.orgId }),
      await wanDevice(t, { orgId: org.orgId }),
      await wanDevice(t, { orgId: org.orgId }),
    ];
    const first = await createTunnels(t, [tunnelBody(a!, b!), tunnelBody(a!, c!), tunnelBody(b!, c!)], { token: org.token });
    expect(first.tunnels.map((x) => x.num)).toEqual([0, 1, 2]);
    expect(first.tunnels[2]).toMatchObject({ loopbackA: "10.100.0.6", loopbackB: "10.100.0.7" });
    expect((await t.api("DELETE", `/api/tunnels/${first.tunnels[1]!.id}`, { token: org.token })).status).toBe(202);
    const again = await createTunnels(t, [tunnelBody(a!, d!), tunnelBody(b!, d!)], { token: org.token });
    expect(again.tunnels.map((x) => x.num)).toEqual([1, 3]);
  });

  it("refuses a tunnel that already exists between the same ends, in either order (TUNNEL_OVERLAPPING)", async () => {
    const a = await wanDevice(t);
    const b = await wanDevice(t);
    const created = await createTunnels(t, tunnelBody(a, b));
    for (const body of [tunnelBody(a, b), tunnelBody(b, a)]) {
      const res = await t.api<ErrorBody>("POST", "/api/tunnels", { token: t.admin.token, body });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe("TUNNEL_OVERLAPPING");
      expect(res.body.details[0]).toMatchObject({ path: "deviceA" });
      expect(res.body.error).toContain(`tunnel ${created.tunnels[0]!.num} already connects these ends`);
    }
    // Twice in one request: refused too, and nothing of the request is created.
    const c = await wanDevice(t);
    const before = await t.database.db.selectFrom("tunnels").select("id").execute();
    const dup = await t.api<ErrorBody>("POST", "/api/tunnels", {
      token: t.admin.token,
      body: [tunnelBody(a, c), tunnelBody(c, a)],
    });
    expect(dup.status).toBe(409);
    expect(dup.body.details).toEqual([
      { path: "1.deviceA", message: "the same tunnel is also given at position 0 of the request" },
    ]);
    expect(await t.database.db.selectFrom("tunnels").select("id").execute()).toHaveLength(before.length);
    // A peer twice from the same interface is the same tunnel as well; from another device it is not.
    const peer = await createPeer(t);
    await createTunnels(t, peerTunnelBody(a, peer.id));
    expect((await t.api("POST", "/api/tunnels", { token: t.admin.token, body: peerTunnelBody(a, peer.id) })).status).toBe(409);
    await createTunnels(t, peerTunnelBody(b, peer.id));
  });

  it("many tunnels at once: 202 whose Location names one job group to follow, not every job id", async () => {
    const hub = await wanDevice(t, { name: "hub" });
    const spokes = [];
    for (let i = 0; i < 101; i++) spokes.push(await wanDevice(t, { name: `spoke-${i}` }));
    const res = await t.api<TunnelsCreated>("POST", "/api/tunnels", {
      token: t.admin.token,
      body: spokes.map((s) => tunnelBody(hub, s)),
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body.tunnels).toHaveLength(101);
    expect(res.body.jobIds).toHaveLength(102);
    const location = res.headers.get("location")!;
    expect(location).toMatch(/^\/api\/jobs\?group=[0-9a-f-]{36}$/);
    const followed = await t.api<{ id: string; device: { id: string } }[]>("GET", `${location}&limit=1000`, {
      token: t.admin.token,
    });
    expect(followed.status).toBe(200);
    expect(followed.body.map((j) => j.id).sort()).toEqual([...res.body.jobIds].sort());
    expect(new Set(followed.body.map((j) => j.device.id)).size).toBe(102);
    // Another organization following the same Location sees none of them.
    const other = await t.createTenant("group-outsider");
    const theirs = await t.api<unknown[]>("GET", location, { token: other.token });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual([]);
  });

  it("is all or nothing: one bad tunnel in a list creates none and queues no job", async () => {
    const a = await wanDevice(t);
    const b = await wanDevice(t);
    const c = await wanDevice(t);
    const tunnels = await t.database.db.selectFrom("tunnels").select("id").execute();
    const jobs = await t.database.db.selectFrom("jobs").select("id").execute();
    const res = await t.api<ErrorBody>("POST", "/api/tunnels", {
      token: t.admin.token,
      body: [tunnelBody(a, b), tunnelBody(a, c, { interfaceB: c.lan.id })],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_FAILED");
    expect(res.body.details).toEqual([{ path: "1.interfaceB", message: expect.stringContaining("LAN interface") }]);
    expect(await t.database.db.selectFrom("tunnels").select("id").execute()).toHaveLength(tunnels.length);
    expect(await t.database.db.selectFrom("jobs").select("id").execute()).toHaveLength(jobs.length);
  });

  it("validates the body and both ends, naming each problem with its code", async () => {
    const a = await wanDevice(t);
    const b = await wanDevice(t);
    const other = await t.createTenant("Elsewhere");
    const foreign = await wanDevice(t, { orgId: other.orgId });
    const unapproved = await wanDevice(t, { approved: false });
    const cases: [unknown, number, string, string][] = [
      [{ ...tunnelBody(a, b), deviceB: a.id }, 400, "VALIDATION_FAILED", "deviceB"],
      [{ deviceA: a.id, interfaceA: a.wan.id }, 400, "VALIDATION_FAILED", "deviceB"],
      [{ ...tunnelBody(a, b), peer: randomUUID() }, 400, "VALIDATION_FAILED", "peer"],
      [{ ...tunnelBody(a, b), deviceA: "not-a-uuid" }, 400, "VALIDATION_FAILED", "deviceA"],
      [[], 400, "VALIDATION_FAILED", ""],
      [tunnelBody(a, foreign), 404, "NOT_FOUND", "deviceB"],
      [{ ...tunnelBody(a, b), interfaceB: randomUUID() }, 404, "NOT_FOUND", "interfaceB"],
      [peerTunnelBody(a, randomUUID()), 404, "NOT_FOUND", "peer"],
      [{ ...tunnelBody(a, b), pathlabel: randomUUID() }, 404, "NOT_FOUND", "pathlabel"],
      [{ ...tunnelBody(a, b), interfaceA: a.lan.id }, 400, "VALIDATION_FAILED", "interfaceA"],
      [tunnelBody(a, unapproved), 400, "VALIDATION_FAILED", "deviceB"],
    ];
    for (const [body, status, code, path] of cases) {
      const res = await t.api<ErrorBody>("POST", "/api/tunnels", { token: t.admin.token, body });
      const label = `${JSON.stringify(body)} → ${res.text}`;
      expect(res.status, label).toBe(status);
      expect(res.body.code, label).toBe(code);
      expect(
        res.body.details.map((d) => d.path),
        label,
      ).toContain(path);
    }
  });

  it("refuses interfaces that cannot carry a tunnel: unassigned, or without an address", async () => {
    const a = await wanDevice(t);
    const b = await wanDevice(t);
    for (const change of [{ isAssigned: false }, { dhcp: false, IPv4: "", IPv4Mask: null, gateway: "" }]) {
      await t.database.db
        .updateTable("devices")
        .set({ interfaces: toJson([{ ...b.wan, ...change }, b.lan]) })
        .where("id", "=", b.id)
        .execute();
      const res = await t.api<ErrorBody>("POST", "/api/tunnels", { token: t.admin.token, body: tunnelBody(a, b) });
      expect(res.status, res.text).toBe(400);
      expect(res.body.details).toEqual([{ path: "interfaceB", message: expect.stringMatching(/not assigned|no address/) }]);
    }
    // A DHCP client without an address yet is fine: the tunnel waits for the address.
    await t.database.db
      .updateTable("devices")
      .set({ interfaces: toJson([{ ...b.wan, dhcp: true, IPv4: "", IPv4Mask: null, gateway: "" }, b.lan]) })
      .where("id", "=", b.id)
      .execute();
    const created = await createTunnels(t, tunnelBody(a, b));
    const tunnel = await getTunnel(t, created.tunnels[0]!.id);
    expect(tunnel.isPending).toBe(true);
    expect(tunnel.pendingReason).toContain(`device ${a.name} cannot configure the tunnel yet`);
    // b's own side compiles (its address is learnt by the agent), a's waits for b's address.
    expect(DeviceConfig.parse(await desiredConfig(t, b.id)).tunnels.map((x) => x.id)).toContain(tunnel.id);
    expect(DeviceConfig.parse(await desiredConfig(t, a.id)).tunnels.map((x) => x.id)).not.toContain(tunnel.id);
  });

  it("refuses when the organization's tunnel range has no free number (TUNNEL_RANGE_EXHAUSTED)", async () => {
    const org = await t.createTenant("Small range");
    const put = await t.api("PUT", `/api/organizations/${org.orgId}`, {
      token: org.token,
      body: { tunnelRange: "10.250.0.0/24" },
    });
    expect(put.status).toBe(200);
    const a = await wanDevice(t, { orgId: org.orgId });
    const b = await wanDevice(t, { orgId: org.orgId });
    const c = await wanDevice(t, { orgId: org.orgId });
    // Numbers 0..125 taken (rows straight in the database: only the count matters here).
    await t.database.db
      .insertInto("tunnels")
      .values(
        Array.from({ length: 126 }, () => randomUUID()).map((id, num) => ({
          id,
          organization_id: org.orgId,
          num,
          device_a: a.id,
          interface_a: randomUUID(),
          device_b: b.id,
          interface_b: randomUUID(),
          endpoint_key: `filler-${num}`,
          psk_enc: t.deps.keyring.encrypt("filler", id),
          notifications: toJson({ rtt: null, dropRate: null }),
        })),
      )
      .execute();
    const two = await t.api<ErrorBody>("POST", "/api/tunnels", {
      token: org.token,
      body: [tunnelBody(a, c), tunnelBody(b, c)],
    });
    expect(two.status).toBe(409);
    expect(two.body.code).toBe("TUNNEL_RANGE_EXHAUSTED");
    expect(two.body.error).toContain("10.250.0.0/24 holds 127 tunnels and 126 are in use");
    const one = await t.api<TunnelsCreated>("POST", "/api/tunnels", { token: org.token, body: tunnelBody(a, c) });
    expect(one.status, one.text).toBe(202);
    expect(one.body.tunnels[0]).toMatchObject({ num: 126, loopbackA: "10.250.0.254", loopbackB: "10.250.0.255" });
    const three = await t.api<ErrorBody>("POST", "/api/tunnels", { token: org.token, body: tunnelBody(b, c) });
    expect(three.body.code).toBe("TUNNEL_RANGE_EXHAUSTED");
  });

  it("gives simultaneous creations distinct numbers, and only one of two identical ones succeeds", async () => {
    const org = await t.createTenant("Concurrent");
    const hub = await wanDevice(t, { orgId: org.orgId });
    const spokes = await Promise.all(Array.from({ length: 8 }, () => wanDevice(t, { orgId: org.orgId })));
    const results = await Promise.all(
      spokes.map((s) => t.api<TunnelsCreated>("POST", "/api/tunnels", { token: org.token, body: tunnelBody(hub, s) })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(202));
    expect(results.map((r) => r.body.tunnels[0]!.num).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // The hub's desired config has all eight, whichever transaction compiled it last.
    const config = DeviceConfig.parse(await desiredConfig(t, hub.id));
    expect(config.tunnels.map((x) => x.num)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);

    const x = await wanDevice(t, { orgId: org.orgId });
    const same = await Promise.all(
      [tunnelBody(hub, x), tunnelBody(x, hub)].map((body) =>
        t.api<ErrorBody>("POST", "/api/tunnels", { token: org.token, body }),
      ),
    );
    expect(same.map((r) => r.status).sort()).toEqual([202, 409]);
    expect(same.find((r) => r.status === 409)?.body.code).toBe("TUNNEL_OVERLAPPING");
  });
});
