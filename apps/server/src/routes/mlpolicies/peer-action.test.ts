/**
 * The `peer` action of a multi-link policy (cloud security): a LAN's
 * internet-bound traffic through the device's tunnel to a peer. Validation
 * (one of path labels or peer, a peer of this organization) and the compiled
 * rule: the device's tunnels to the peer, marked to carry 0.0.0.0/0.
 */
import { DeviceConfig, type MlPolicy } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";
import {
  createPeer,
  createTunnels,
  desiredConfig,
  type ErrorBody,
  peerTunnelBody,
  wanDevice,
} from "../../../test/support/tunnels.ts";

const rule = (action: Record<string, unknown>, name = "cloud-security") => ({
  name,
  rules: [{ name: "lan-internet", priority: 5, match: { source: "192.168.10.0/24" }, action }],
});

describe("multi-link policy peer action (cloud security)", () => {
  const t = useTestServer();
  const create = (body: unknown, token = t.admin.token) => t.api<MlPolicy>("POST", "/api/mlpolicies", { token, body });

  it("needs exactly one of pathlabels and peer, and a peer of this organization", async () => {
    const peer = await createPeer(t, { name: "edge", preset: "cloudflare-magic-wan" });
    const other = await t.createTenant("Another tenant");
    const foreign = await createPeer(t, { name: "theirs" }, other.token);
    for (const [action, path] of [
      [{}, "rules.0.action.pathlabels"],
      [{ peer: peer.id, pathlabels: [crypto.randomUUID()] }, "rules.0.action.peer"],
      [{ peer: "not-a-uuid" }, "rules.0.action.peer"],
      [{ peer: crypto.randomUUID() }, "rules.0.action.peer"],
      [{ peer: foreign.id }, "rules.0.action.peer"],
    ] as const) {
      const res = await t.api<ErrorBody>("POST", "/api/mlpolicies", { token: t.admin.token, body: rule(action) });
      expect(res.status, `${JSON.stringify(action)}: ${res.text}`).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details.map((d) => d.path)).toContain(path);
    }
    const ok = await create(rule({ peer: peer.id, fallback: "drop" }));
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.rules[0]?.action).toMatchObject({ peer: peer.id, pathlabels: [], fallback: "drop" });
  });

  it("compiles to the device's tunnels to the peer, which then carry the internet selector; devices without one get no rule", async () => {
    const peer = await createPeer(t, { name: "zscaler-like", preset: "cloudflare-magic-wan" });
    const withTunnel = await wanDevice(t, { name: "branch-cs" });
    const without = await wanDevice(t, { name: "branch-plain" });
    const created = await createTunnels(t, peerTunnelBody(withTunnel, peer.id));
    const tunnelId = created.tunnels[0]!.id;
    const before = DeviceConfig.parse(await desiredConfig(t, withTunnel.id)).tunnels[0]!;
    expect(before).not.toHaveProperty("internet");

    const created2 = await create(rule({ peer: peer.id, fallback: "drop" }, "installed-cloud-security"));
    expect(created2.status, created2.text).toBe(201);
    const policy = created2.body;
    const res = await t.api<{ jobIds: string[] }>("POST", `/api/mlpolicies/${policy.id}/install`, {
      token: t.admin.token,
      body: { deviceIds: [withTunnel.id, without.id] },
    });
    expect(res.status, res.text).toBe(202);

    const config = DeviceConfig.parse(await desiredConfig(t, withTunnel.id));
    expect(config.policy?.rules).toEqual([
      {
        name: "lan-internet",
        priority: 5,
        match: { source: "192.168.10.0/24", destination: "", protocol: "any", ports: "", dscp: null },
        order: "priority",
        pathLabels: [],
        tunnels: [tunnelId],
        fallback: "drop",
        linkQuality: null,
      },
    ]);
    expect(config.tunnels[0]).toMatchObject({ id: tunnelId, internet: true, dpdSeconds: 10 });
    // The other device has no tunnel to the peer: the rule is left out rather than sending its traffic nowhere.
    expect(DeviceConfig.parse(await desiredConfig(t, without.id)).policy?.rules).toEqual([]);

    // The peer cannot go while a policy sends traffic to it (even once its tunnels are gone).
    const del = await t.api<ErrorBody>("DELETE", `/api/tunnels/${tunnelId}`, { token: t.admin.token });
    expect(del.status, del.text).toBe(202);
    const refused = await t.api<ErrorBody>("DELETE", `/api/peers/${peer.id}`, { token: t.admin.token });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("CONFLICT");
    expect(refused.body.details).toEqual([
      { path: "mlpolicies", message: `multi-link policy installed-cloud-security (${policy.id})` },
    ]);
  });

  it("force-deleting a path label keeps the peer-action rules of the policies it is removed from", async () => {
    const peer = await createPeer(t, { name: "edge-2" });
    const label = (await t.api<{ id: string }>("POST", "/api/pathlabels", { token: t.admin.token, body: { name: "going" } }))
      .body;
    const policy = (
      await create({
        name: "mixed",
        rules: [
          { name: "labelled", priority: 1, match: {}, action: { pathlabels: [label.id] } },
          { name: "to-edge", priority: 2, match: { source: "192.168.20.0/24" }, action: { peer: peer.id } },
        ],
      })
    ).body;
    const res = await t.api("DELETE", `/api/pathlabels/${label.id}`, { token: t.admin.token, query: { force: "true" } });
    expect(res.status, res.text).toBe(204); // installed nowhere: no device work
    const after = await t.api<MlPolicy>("GET", `/api/mlpolicies/${policy.id}`, { token: t.admin.token });
    expect(after.body.rules.map((r) => r.name)).toEqual(["to-edge"]);
  });
});
