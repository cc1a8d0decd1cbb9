/**
 * Concurrent changes that touch the same device through different resources
 * (a peer update and a tunnel creation) must leave the device's stored desired
 * config equal to a fresh compile of the committed rows: queueConfigJobs locks
 * the devices before reading their inputs. Meaningful on PostgreSQL (real
 * concurrency); on PGlite the transactions run one after the other anyway.
 */

import { describe, expect, it } from "vitest";
import { compileDeviceConfig } from "../../src/compile/index.ts";
import { loadCompileInputs } from "../../src/services/desired-config.ts";
import { useTestServer } from "../support/test-server.ts";
import { createPeer, createTunnels, PEER, peerTunnelBody, tunnelBody, wanDevice } from "../support/tunnels.ts";

describe("desired config under concurrent changes", () => {
  const t = useTestServer();

  it("a peer update racing tunnel creations on the same device loses neither change", async () => {
    const tenant = await t.createTenant("Racing changes");
    const hub = await wanDevice(t, { orgId: tenant.orgId });
    const peer = await createPeer(t, { name: "racy" }, tenant.token);
    await createTunnels(t, peerTunnelBody(hub, peer.id), { token: tenant.token });
    for (let round = 0; round < 6; round++) {
      const spoke = await wanDevice(t, { orgId: tenant.orgId });
      const [put, post] = await Promise.all([
        t.api("PUT", `/api/peers/${peer.id}`, {
          token: tenant.token,
          body: { ...PEER, name: "racy", psk: undefined, ikeLifeTime: 3600 * (round + 2) },
        }),
        t.api("POST", "/api/tunnels", { token: tenant.token, body: tunnelBody(hub, spoke) }),
      ]);
      expect([put.status, post.status]).toEqual([202, 202]);
      const stored = await t.database.db
        .selectFrom("devices")
        .select("desired_hash")
        .where("id", "=", hub.id)
        .executeTakeFirstOrThrow();
      const inputs = await loadCompileInputs(t.database.db, t.deps.keyring, tenant.orgId, [hub.id]);
      const fresh = compileDeviceConfig(inputs.get(hub.id)!);
      expect(fresh.config.tunnels).toHaveLength(round + 2);
      expect(fresh.config.tunnels.find((x) => x.kind === "peer")?.ike.lifetimeSeconds).toBe(3600 * (round + 2));
      expect(stored.desired_hash, `round ${round}`).toBe(fresh.hash);
    }
  });
});
