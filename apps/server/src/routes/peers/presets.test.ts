/**
 * Peer presets (cloud IPsec gateways): GET /api/peers/presets, `preset` on
 * POST and PUT filling the vendor's values, explicit fields winning, unknown
 * presets refused with PEER_PRESET_UNKNOWN, and the compiled tunnel carrying
 * the preset's lifetimes, PFS and DPD.
 */
import { DeviceConfig, PEER_PRESETS, type Peer, type PeerPresetInfo, type PeerUpdated } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";
import { createTunnels, desiredConfig, type ErrorBody, peerTunnelBody, wanDevice } from "../../../test/support/tunnels.ts";
import { toJson } from "../../db/json.ts";

/** The fields every peer needs; everything a preset fills is left out. */
const BASE = { remoteIP: "198.51.100.20", psk: "cloud-psk-0123456789", remoteTrafficSelectors: ["10.60.0.0/16"] };

describe("/api/peers presets", () => {
  const t = useTestServer();

  it("GET /peers/presets lists every vendor with its source and values", async () => {
    const res = await t.api<PeerPresetInfo[]>("GET", "/api/peers/presets", { token: t.admin.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((p) => p.id)).toEqual(["aws-site-to-site", "azure-vpn-gateway", "gcp-ha-vpn", "cloudflare-magic-wan"]);
    for (const p of res.body) {
      expect(p.source).toMatch(/^https:\/\//);
      expect(p.note.length).toBeGreaterThan(40);
      expect(p.values.ikeVersion).toBe(2);
    }
    expect(res.body.find((p) => p.id === "aws-site-to-site")?.values).toMatchObject({
      ikeLifeTime: 28800,
      sessionLifeTime: 3600,
      pfs: true,
      dpdDelay: 10,
    });
  });

  it("POST with a preset fills its values; GET returns the effective values and the preset name", async () => {
    for (const preset of PEER_PRESETS) {
      const res = await t.api<Peer>("POST", "/api/peers", {
        token: t.admin.token,
        body: { ...BASE, name: `via-${preset.id}`, preset: preset.id },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ ...preset.values, preset: preset.id });
      const got = await t.api<Peer>("GET", `/api/peers/${res.body.id}`, { token: t.admin.token });
      expect(got.body).toEqual(res.body);
    }
    const listed = await t.api<Peer[]>("GET", "/api/peers", {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "preset", op: "==", val: "gcp-ha-vpn" }]) },
    });
    expect(listed.body.map((p) => p.name)).toEqual(["via-gcp-ha-vpn"]);
  });

  it("fields given explicitly win over the preset; without a preset Tern's defaults apply", async () => {
    const res = await t.api<Peer>("POST", "/api/peers", {
      token: t.admin.token,
      body: {
        ...BASE,
        name: "aws-but-gcm",
        preset: "aws-site-to-site",
        espCryptoAlg: "aes-gcm",
        sessionLifeTime: 1800,
        pfs: false,
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      preset: "aws-site-to-site",
      espCryptoAlg: "aes-gcm",
      sessionLifeTime: 1800,
      pfs: false,
      ikeLifeTime: 28800,
      dpdDelay: 10,
    });
    const plain = await t.api<Peer>("POST", "/api/peers", { token: t.admin.token, body: { ...BASE, name: "no-preset" } });
    expect(plain.body).toMatchObject({
      preset: null,
      ikeVersion: 2,
      ikeLifeTime: 86400,
      sessionLifeTime: 3600,
      pfs: false,
      dpdDelay: 10,
    });
  });

  it("an unknown preset is 400 PEER_PRESET_UNKNOWN at `preset`; a preset does not excuse bad lifetimes", async () => {
    const res = await t.api<ErrorBody>("POST", "/api/peers", {
      token: t.admin.token,
      body: { ...BASE, name: "bad-preset", preset: "oracle-cloud" },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("PEER_PRESET_UNKNOWN");
    expect(res.body.details.map((d) => d.path)).toEqual(["preset"]);
    // Azure's 27000 s phase 2 with an explicit 7200 s phase 1: the resolved values are checked.
    const lifetimes = await t.api<ErrorBody>("POST", "/api/peers", {
      token: t.admin.token,
      body: { ...BASE, name: "bad-lifetimes", preset: "azure-vpn-gateway", ikeLifeTime: 7200 },
    });
    expect(lifetimes.status).toBe(400);
    expect(lifetimes.body.code).toBe("VALIDATION_FAILED");
    expect(lifetimes.body.details[0]?.path).toBe("sessionLifeTime");
  });

  it("PUT switches the preset and recompiles the devices using the peer with its lifetimes, PFS, DPD and IKE version", async () => {
    const peer = (
      await t.api<Peer>("POST", "/api/peers", {
        token: t.admin.token,
        body: { ...BASE, name: "moving", preset: "aws-site-to-site" },
      })
    ).body;
    const a = await wanDevice(t, { name: "cloud-branch" });
    await createTunnels(t, peerTunnelBody(a, peer.id));
    const res = await t.api<PeerUpdated>("PUT", `/api/peers/${peer.id}`, {
      token: t.admin.token,
      body: { ...BASE, name: "moving", preset: "azure-vpn-gateway" },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ preset: "azure-vpn-gateway", sessionLifeTime: 27000, pfs: false, dpdDelay: 15 });
    expect(res.body.jobIds).toHaveLength(1);
    const tunnel = DeviceConfig.parse(await desiredConfig(t, a.id)).tunnels[0]!;
    expect(tunnel).toMatchObject({
      ike: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 28800 },
      esp: { proposal: "aes256-sha256", lifetimeSeconds: 27000, pfs: false },
      dpdSeconds: 15,
    });
    // IKEv2 is the absent default, so configs of IKEv2 peers hash as before the field existed.
    expect(tunnel).not.toHaveProperty("ikeVersion");
    const v1 = await t.api<PeerUpdated>("PUT", `/api/peers/${peer.id}`, {
      token: t.admin.token,
      body: { ...BASE, name: "moving", preset: "azure-vpn-gateway", ikeVersion: 1 },
    });
    expect(v1.body).toMatchObject({ ikeVersion: 1, preset: "azure-vpn-gateway" });
    expect(DeviceConfig.parse(await desiredConfig(t, a.id)).tunnels[0]).toMatchObject({ ikeVersion: 1 });
    // Back to no preset: the body is the whole peer, so Tern's defaults return.
    const none = await t.api<PeerUpdated>("PUT", `/api/peers/${peer.id}`, {
      token: t.admin.token,
      body: { ...BASE, name: "moving" },
    });
    expect(none.body).toMatchObject({ preset: null, sessionLifeTime: 3600, ikeLifeTime: 86400, dpdDelay: 10 });
  });

  it("peers stored before presets existed read back as IKEv2, DPD 10 s, no preset", async () => {
    const peer = (await t.api<Peer>("POST", "/api/peers", { token: t.admin.token, body: { ...BASE, name: "old-row" } })).body;
    const row = await t.database.db.selectFrom("peers").select("config").where("id", "=", peer.id).executeTakeFirstOrThrow();
    const { ikeVersion: _v, dpdDelay: _d, preset: _p, ...old } = row.config as Record<string, unknown>;
    await t.database.db
      .updateTable("peers")
      .set({ config: toJson(old) })
      .where("id", "=", peer.id)
      .execute();
    const got = await t.api<Peer>("GET", `/api/peers/${peer.id}`, { token: t.admin.token });
    expect(got.body).toMatchObject({ ikeVersion: 2, dpdDelay: 10, preset: null });
    const a = await wanDevice(t, { name: "old-peer-user" });
    await createTunnels(t, peerTunnelBody(a, peer.id));
    const tunnel = DeviceConfig.parse(await desiredConfig(t, a.id)).tunnels[0]!;
    expect(tunnel.dpdSeconds).toBe(10);
    expect(tunnel).not.toHaveProperty("ikeVersion");
  });
});
