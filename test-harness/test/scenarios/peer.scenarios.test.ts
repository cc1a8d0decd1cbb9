/**
 * Scenario 8 of issue 7 on the peer lab (topologies/ikev2-peer.yaml): site-a
 * connects to dc-gw, a stock strongSwan the lab configured from the topology
 * (PSK, identities, IKE lifetime 28800 s, CHILD lifetime 3600 s, PFS with
 * modp2048) and that Tern never touches. The admin enters the same values as
 * a peer, and a tunnel from site-a's WAN to it.
 */
import { join } from "node:path";
import { privilegedTestsEnabled } from "@tern/netlab";
import { Peer, Tunnel } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { PlanStrongswanPeer } from "../../src/plan/types.ts";
import { ping } from "../helpers.ts";
import { ikeConns } from "./support/ikev2.ts";
import {
  getTunnel,
  JobsQueued,
  jobsComplete,
  LiveChecks,
  SCENARIO_COMMANDS,
  type ScenarioLab,
  upScenarioLab,
  waitFor,
  waitForPing,
} from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: peer connection", SCENARIO_COMMANDS);
const TunnelsCreated = z.object({ jobIds: z.array(z.string()), tunnels: z.array(z.object({ id: z.string() })) });

describe.runIf(enabled)("peer connection to a stock strongSwan (scenario 8)", () => {
  let s: ScenarioLab;
  beforeAll(async () => {
    s = await upScenarioLab("ikev2-peer.yaml");
  });
  afterAll(async () => {
    if (!s) return;
    expect(await s.down()).toEqual({ namespaces: [], processes: [] });
  });

  /** swanctl against the stock gateway's own charon. */
  const stock = (args: string[]) =>
    s.sh("dc-gw", ["swanctl", ...args, "--uri", `unix://${join(s.lab.dir, "nodes", "dc-gw", "strongswan", "charon.vici")}`]);

  it("8. peer connection: IKEv2 to the stock gateway with its ikeLifeTime and pfs; device B / interface B null in GET /tunnels", async () => {
    const live = new LiveChecks();
    const gw = s.lab.plan.peers.find((p): p is PlanStrongswanPeer => p.kind === "strongswan")!;
    const dcHost = "10.250.0.10";
    const peer = await s.api.post("/api/peers", Peer, {
      name: "dc-gw",
      idType: "fqdn",
      localId: gw.config.remoteId,
      remoteIdType: "fqdn",
      remoteId: gw.config.localId,
      remoteIP: gw.localAddress,
      psk: gw.config.psk,
      pfs: gw.config.pfs,
      ikeLifeTime: gw.config.ikeLifeTime,
      sessionLifeTime: gw.config.childLifeTime,
      localTrafficSelectors: gw.config.remoteTs,
      remoteTrafficSelectors: gw.config.localTs,
      ips: [dcHost],
    });
    expect(peer).toMatchObject({ pskSet: true, ikeLifeTime: 28_800, sessionLifeTime: 3600, pfs: true });
    const wan = await s.iface("site-a", "wan0");
    const created = await s.api.call("POST", "/api/tunnels", TunnelsCreated, {
      body: { deviceA: s.deviceId("site-a"), interfaceA: wan.id, peer: peer.id },
    });
    expect(created.status).toBe(202);
    expect(created.data.jobIds).toHaveLength(1);
    await jobsComplete(s.api, created.data.jobIds);
    const tunnelId = created.data.tunnels[0]!.id;
    try {
      const [listed] = await s.api.get("/api/tunnels", z.array(Tunnel));
      expect(listed).toMatchObject({
        id: tunnelId,
        deviceA: { name: "site-a" },
        interfaceA: { name: "wan0" },
        deviceB: null,
        interfaceB: null,
        peer: { id: peer.id, name: "dc-gw", remoteIP: gw.localAddress },
        tunnelStatusB: "unknown",
      });

      // The stock gateway (a responder) has the IKE SA from site-a, with the identities both sides configured.
      await waitFor(30_000, async () => {
        const sas = (await stock(["--list-sas"])).stdout;
        return /ESTABLISHED/.test(sas) && sas.includes("site-a.lab") ? true : `no SA on dc-gw yet:\n${sas}`;
      });
      // Tern's side uses the peer's lifetimes.
      const conns = await ikeConns(s, "site-a");
      expect(conns).toMatch(/IKEv2, no reauthentication, rekeying every 28800s/);
      expect(conns).toMatch(/TUNNEL, rekeying every 3600s/);
      // PFS: a rekeyed CHILD_SA (asked for by the stock side) negotiates a DH group.
      const child = /^ {2}(\S+): #(\d+),/m.exec((await stock(["--list-sas"])).stdout);
      expect(child).not.toBeNull();
      expect((await stock(["--rekey", "--child", child![1]!])).exitCode).toBe(0);
      await waitFor(20_000, async () => {
        const sas = (await stock(["--list-sas"])).stdout;
        return /INSTALLED, TUNNEL(-in-UDP)?, ESP:AES_CBC-256\/HMAC_SHA2_256_128\/MODP_2048/.test(sas)
          ? true
          : `no PFS CHILD_SA:\n${sas}`;
      });
      const ike = (await stock(["--list-sas"])).stdout;
      const rekeyIn = Number(/rekeying in (\d+)s/.exec(ike)?.[1]);
      // The stock side rekeys its IKE SA within its own 28800 s (less its random jitter).
      expect(rekeyIn).toBeGreaterThan(0);
      expect(rekeyIn).toBeLessThanOrEqual(28_800);

      // Traffic between site-a's LAN and the data centre, both ways.
      await waitForPing(s, "lan-a-h1", dcHost);
      expect((await ping(s.ns("lan-a-h1"), dcHost, 10, 0.05)).received).toBe(10);
      expect((await ping(s.ns("dc-h1"), "192.168.10.10", 10, 0.05)).received).toBe(10);

      const connected = await live.wait("peer tunnel Connected with quality from site-a", 60_000, async () => {
        const t = await getTunnel(s.api, tunnelId);
        return t.tunnelStatus === "Connected" && t.status === "Connected" && t.quality.a?.up
          ? true
          : `tunnelStatus ${t.tunnelStatus}, status ${t.status}, quality ${JSON.stringify(t.quality)}`;
      });
      if (connected) {
        const t = await getTunnel(s.api, tunnelId);
        expect([t.tunnelStatusA, t.tunnelStatusB, t.quality.b]).toEqual(["up", "unknown", null]);
        expect(t.quality.a!.loss).toBeLessThanOrEqual(10);
      }
    } finally {
      const del = await s.api.call("DELETE", `/api/tunnels/${tunnelId}`, JobsQueued);
      await jobsComplete(s.api, del.data.jobIds);
      await s.api.delete(`/api/peers/${peer.id}`);
    }
    await waitFor(30_000, async () =>
      /ESTABLISHED/.test((await stock(["--list-sas"])).stdout) ? "dc-gw still has the SA" : true,
    );
    live.assertAll();
  });
});
