/** /api/peers: list, create, get, update (PSK kept or replaced, jobs for devices using the peer), delete. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DeviceConfig, type Peer, type PeerUpdated } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";
import {
  createPeer,
  createTunnels,
  desiredConfig,
  type ErrorBody,
  PEER,
  peerTunnelBody,
  wanDevice,
} from "../../../test/support/tunnels.ts";

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, "../../../../../packages/protocol/fixtures/v1/PeerCreate", name), "utf8"));

describe("/api/peers", () => {
  const t = useTestServer();

  it("POST creates a peer; the PSK is never returned and is encrypted at rest", async () => {
    const res = await t.api<Peer>("POST", "/api/peers", { token: t.admin.token, body: fixture("valid-pfs.json") });
    expect(res.status, res.text).toBe(201);
    const psk = fixture("valid-pfs.json").psk as string;
    expect(res.body).toMatchObject({ name: "hq-gw", pfs: true, pskSet: true, tunnels: 0, org: t.admin.orgId });
    expect(res.body).not.toHaveProperty("psk");
    expect(res.text).not.toContain(psk);

    const row = await t.database.db.selectFrom("peers").selectAll().where("id", "=", res.body.id).executeTakeFirstOrThrow();
    expect(row.psk_enc).not.toContain(psk);
    expect(JSON.stringify(row.config)).not.toContain(psk);
    expect(t.deps.keyring.decrypt(row.psk_enc, row.id)).toBe(psk);
    // Bound to its row: the ciphertext moved to another row does not decrypt.
    expect(() => t.deps.keyring.decrypt(row.psk_enc, crypto.randomUUID())).toThrow();

    const got = await t.api<Peer>("GET", `/api/peers/${res.body.id}`, { token: t.admin.token });
    expect(got.body).toEqual(res.body);
    const audit = await t.database.db.selectFrom("audit_log").select("after").where("resource_id", "=", res.body.id).execute();
    expect(JSON.stringify(audit)).not.toContain(psk);
  });

  it("POST fills the reference defaults (6.3.1: pfs off, phase 1 86400 s, phase 2 3600 s)", async () => {
    const res = await t.api<Peer>("POST", "/api/peers", {
      token: t.admin.token,
      body: { name: "minimal", remoteIP: "198.51.100.7", psk: "minimal-psk-123", remoteTrafficSelectors: ["10.9.0.0/16"] },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      pfs: false,
      ikeLifeTime: 86400,
      sessionLifeTime: 3600,
      ikeCryptoAlg: "aes-cbc",
      ikeDhGroup: "modp2048",
      idType: "ip",
      localTrafficSelectors: [],
    });
  });

  it("POST validates fields with codes and paths; names are unique per organization", async () => {
    for (const [body, path] of [
      [fixture("invalid-session-longer-than-ike.json").value, "sessionLifeTime"],
      [fixture("invalid-short-psk.json").value, "psk"],
      [{ ...PEER, name: "x", remoteIP: "300.1.1.1" }, "remoteIP"],
      [{ ...PEER, name: "x", remoteTrafficSelectors: [] }, "remoteTrafficSelectors"],
      [{ ...PEER, name: "x", remoteTrafficSelectors: ["10.0.0.1/24"] }, "remoteTrafficSelectors.0"],
      [{ ...PEER, name: "x", ikeDhGroup: "modp1024" }, "ikeDhGroup"],
      [{ ...PEER, name: "x", ikeLifeTime: 10 }, "ikeLifeTime"],
      [{ ...PEER, name: "" }, "name"],
    ] as const) {
      const res = await t.api<ErrorBody>("POST", "/api/peers", { token: t.admin.token, body });
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details.map((d) => d.path)).toContain(path);
    }
    await createPeer(t, { name: "twice" });
    const again = await t.api<ErrorBody>("POST", "/api/peers", { token: t.admin.token, body: { ...PEER, name: "twice" } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("CONFLICT");
    // Another organization may use the name.
    const other = await t.createTenant("Peers elsewhere");
    await createPeer(t, { name: "twice" }, other.token);
  });

  it("PUT replaces the peer, keeps the PSK when omitted, and queues peers jobs for the devices using it", async () => {
    const peer = await createPeer(t, { name: "branch-gw" });
    const before = (await t.database.db.selectFrom("peers").select("psk_enc").where("id", "=", peer.id).executeTakeFirstOrThrow())
      .psk_enc;
    // Unused: nothing to recompile, 200 and no jobs.
    const unused = await t.api<PeerUpdated>("PUT", `/api/peers/${peer.id}`, {
      token: t.admin.token,
      body: { ...PEER, name: "branch-gw", psk: undefined, ikeLifeTime: 43200 },
    });
    expect(unused.status, unused.text).toBe(200);
    expect(unused.body).toMatchObject({ ikeLifeTime: 43200, jobIds: [], pskSet: true });
    const kept = await t.database.db.selectFrom("peers").select("psk_enc").where("id", "=", peer.id).executeTakeFirstOrThrow();
    expect(kept.psk_enc).toBe(before);

    const a = await wanDevice(t, { name: "uses-peer" });
    const b = await wanDevice(t, { name: "also-uses-peer" });
    await createTunnels(t, [peerTunnelBody(a, peer.id), peerTunnelBody(b, peer.id)]);
    const res = await t.api<PeerUpdated>("PUT", `/api/peers/${peer.id}`, {
      token: t.admin.token,
      body: { ...PEER, name: "branch-gw", psk: "a-brand-new-secret", pfs: false, sessionLifeTime: 1800, ikeLifeTime: 7200 },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ name: "branch-gw", pfs: false, sessionLifeTime: 1800, ikeLifeTime: 7200, tunnels: 2 });
    expect(res.body.jobIds).toHaveLength(2);
    expect(res.headers.get("location")).toContain(res.body.jobIds[0]);
    expect(res.text).not.toContain("a-brand-new-secret");
    const jobs = await t.database.db.selectFrom("jobs").selectAll().where("id", "in", res.body.jobIds).execute();
    expect(jobs.map((j) => j.device_id).sort()).toEqual([a.id, b.id].sort());
    expect(jobs.every((j) => j.type === "peers")).toBe(true);
    const tunnel = DeviceConfig.parse(await desiredConfig(t, a.id)).tunnels[0]!;
    expect(tunnel).toMatchObject({
      kind: "peer",
      auth: { psk: "a-brand-new-secret" },
      ike: { lifetimeSeconds: 7200 },
      esp: { lifetimeSeconds: 1800, pfs: false },
    });
  });

  it("PUT validates like POST and refuses a name taken by another peer; unknown ids are 404", async () => {
    const peer = await createPeer(t, { name: "renamed" });
    await createPeer(t, { name: "taken" });
    const bad = await t.api<ErrorBody>("PUT", `/api/peers/${peer.id}`, {
      token: t.admin.token,
      body: { ...PEER, name: "renamed", sessionLifeTime: 90000, ikeLifeTime: 86400 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]?.path).toBe("sessionLifeTime");
    const clash = await t.api<ErrorBody>("PUT", `/api/peers/${peer.id}`, {
      token: t.admin.token,
      body: { ...PEER, name: "taken" },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.details).toEqual([{ path: "name", message: "already used by another peer" }]);
    const missing = await t.api("PUT", `/api/peers/${crypto.randomUUID()}`, {
      token: t.admin.token,
      body: { ...PEER, name: "x" },
    });
    expect(missing.status).toBe(404);
  });

  it("DELETE removes an unused peer and refuses one in use, naming its tunnels", async () => {
    const used = await createPeer(t, { name: "in-use" });
    const a = await wanDevice(t, { name: "peer-user" });
    const created = await createTunnels(t, peerTunnelBody(a, used.id));
    const res = await t.api<ErrorBody>("DELETE", `/api/peers/${used.id}`, { token: t.admin.token });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("CONFLICT");
    expect(res.body.error).toContain(`tunnel ${created.tunnels[0]!.num} from peer-user`);
    expect(res.body.details).toEqual([
      { path: "tunnels", message: `tunnel ${created.tunnels[0]!.num} (${created.tunnels[0]!.id}) from device peer-user` },
    ]);
    expect((await t.api("DELETE", `/api/tunnels/${created.tunnels[0]!.id}`, { token: t.admin.token })).status).toBe(202);
    expect((await t.api("DELETE", `/api/peers/${used.id}`, { token: t.admin.token })).status).toBe(204);
    expect((await t.api("GET", `/api/peers/${used.id}`, { token: t.admin.token })).status).toBe(404);
    expect((await t.api("DELETE", `/api/peers/${used.id}`, { token: t.admin.token })).status).toBe(404);
  });

  it("GET lists with sort, order, every filter op and paging", async () => {
    const tenant = await t.createTenant("Peer list");
    const names = ["delta", "alpha", "charlie", "bravo"];
    for (const [i, name] of names.entries())
      await createPeer(t, { name, remoteIP: `198.51.100.${i + 1}`, pfs: i % 2 === 0, ikeLifeTime: 3600 * (i + 2) }, tenant.token);
    const a = await wanDevice(t, { orgId: tenant.orgId });
    const list = async (query: Record<string, string | number>) => {
      const res = await t.api<Peer[]>("GET", "/api/peers", { token: tenant.token, query });
      expect(res.status, res.text).toBe(200);
      return { names: res.body.map((p) => p.name), total: res.headers.get("records-total"), body: res.body };
    };
    const f = (key: string, op: string, val: unknown) => ({ filter: JSON.stringify([{ key, op, val }]) });
    const alpha = (await list({})).body.find((p) => p.name === "alpha")!;
    await createTunnels(t, peerTunnelBody(a, alpha.id), { token: tenant.token });

    expect(await list({})).toMatchObject({ names: ["alpha", "bravo", "charlie", "delta"], total: "4" });
    expect((await list({ sort: "name", order: "desc" })).names).toEqual(["delta", "charlie", "bravo", "alpha"]);
    expect((await list({ sort: "ikeLifeTime" })).names).toEqual(["delta", "alpha", "charlie", "bravo"]);
    expect((await list({ sort: "tunnels", order: "desc" })).names[0]).toBe("alpha");
    expect((await list(f("name", "==", "bravo"))).names).toEqual(["bravo"]);
    expect((await list(f("name", "!=", "bravo"))).names).toEqual(["alpha", "charlie", "delta"]);
    expect((await list(f("name", "contains", "HAR"))).names).toEqual(["charlie"]);
    expect((await list(f("name", "!contains", "a"))).names).toEqual([]);
    expect((await list(f("ikeLifeTime", "<", 10800))).names).toEqual(["delta"]);
    expect((await list(f("ikeLifeTime", "<=", 10800))).names).toEqual(["alpha", "delta"]);
    expect((await list(f("ikeLifeTime", ">", 14400))).names).toEqual(["bravo"]);
    expect((await list(f("ikeLifeTime", ">=", 14400))).names).toEqual(["bravo", "charlie"]);
    expect((await list(f("remoteIP", "in", ["198.51.100.1", "198.51.100.4"]))).names).toEqual(["bravo", "delta"]);
    expect((await list(f("pfs", "==", true))).names).toEqual(["charlie", "delta"]);
    expect((await list(f("tunnels", ">", 0))).names).toEqual(["alpha"]);
    expect(await list({ offset: 1, limit: 2 })).toMatchObject({ names: ["bravo", "charlie"], total: "4" });
    const bad = await t.api<ErrorBody>("GET", "/api/peers", { token: tenant.token, query: f("psk", "==", "x") });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]?.path).toBe("filter.0.key");
  });
});
