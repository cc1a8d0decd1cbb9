/**
 * Scenario 4 of issue 7 on the hub-and-spokes lab (topologies/hub-spokes.yaml):
 * the hub peers over eBGP with a stock FRR speaker (the lab's, not Tern's)
 * whose WAN address is two hops away (hub → cloud router → speaker). A TTL 1
 * session cannot reach it, so Tern refuses `multiHop: 1` for that neighbour
 * (the API checks it before anything reaches the router); with `multiHop: 2`
 * the session is Established and the routes flow both ways.
 */
import { join } from "node:path";
import { privilegedTestsEnabled } from "@tern/netlab";
import { BgpStatusResponse } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiRequestError } from "../../src/lab/control/index.ts";
import { vtyshArgv } from "../../src/lab/peers/frr.ts";
import {
  JobsQueued,
  jobsComplete,
  LiveChecks,
  SCENARIO_COMMANDS,
  type ScenarioLab,
  upScenarioLab,
  waitFor,
} from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: BGP", SCENARIO_COMMANDS);

describe.runIf(enabled)("hub and spokes (scenario 4)", () => {
  let s: ScenarioLab;
  beforeAll(async () => {
    s = await upScenarioLab("hub-spokes.yaml");
  });
  afterAll(async () => {
    if (!s) return;
    expect(await s.down()).toEqual({ namespaces: [], processes: [] });
  });

  /** The stock speaker's own view of its neighbours (`show bgp summary json`). */
  async function speakerPeers(): Promise<Record<string, { state: string; pfxRcd?: number }>> {
    const dir = join(s.lab.dir, "nodes", "bgp-peer", "frr");
    const r = await s.sh("bgp-peer", vtyshArgv(dir, "show bgp summary json"));
    const summary = JSON.parse(r.stdout || "{}") as {
      ipv4Unicast?: { peers?: Record<string, { state: string; pfxRcd?: number }> };
    };
    return summary.ipv4Unicast?.peers ?? {};
  }

  /** The hub's LAN prefix as both BGP speakers and the hub's kernel see it, for a failure message. */
  async function lanRouteDiagnostics(): Promise<string> {
    const hubBgp = join(s.lab.dir, "nodes", "hub", "agent", "run", "bgp");
    const peerBgp = join(s.lab.dir, "nodes", "bgp-peer", "frr");
    const show = async (node: string, argv: string[]) => {
      const r = await s.sh(node, argv).catch((e: Error) => ({ stdout: "", stderr: e.message }));
      return `$ ${node}: ${argv.join(" ")}\n${(r.stdout || r.stderr).trim().slice(0, 2000)}`;
    };
    const parts = await Promise.all([
      show("hub", ["vtysh", "--vty_socket", hubBgp, "--config_dir", hubBgp, "-c", "show bgp ipv4 unicast 10.10.0.0/24"]),
      show("hub", ["vtysh", "--vty_socket", hubBgp, "--config_dir", hubBgp, "-c", "show ip route 10.10.0.0/24"]),
      show("hub", ["ip", "-br", "addr"]),
      show("bgp-peer", vtyshArgv(peerBgp, "show bgp ipv4 unicast")),
      show("bgp-peer", vtyshArgv(peerBgp, "show ip nht")),
      show("bgp-peer", vtyshArgv(peerBgp, "show zebra client summary")),
      show("bgp-peer", ["ip", "route"]),
    ]);
    return parts.join("\n");
  }

  it("4. BGP multihop: the neighbour two hops away is Established only with multiHop ≥ 2; GET /devices/{id}/bgp/status shows it", async () => {
    const live = new LiveChecks();
    const hub = s.deviceId("hub");
    const speaker = s.lab.wanAddress("bgp-peer");
    const hubWan = s.lab.wanAddress("hub");
    const bgp = (multiHop: number) => ({
      enable: true,
      localASN: 65001,
      keepaliveInterval: 3,
      holdInterval: 9,
      redistributeLan: true,
      neighbors: [{ ip: speaker, remoteASN: 65100, multiHop }],
    });
    const before = await s.device("hub");

    // TTL 1 never leaves the hub's wire: refused, naming the field, and nothing changes.
    const refused = await s.api
      .call("PUT", `/api/devices/${hub}`, z.unknown(), { body: { bgp: bgp(1) } })
      .then(() => null)
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApiRequestError);
    expect((refused as ApiRequestError).status).toBe(400);
    expect((refused as ApiRequestError).code).toBe("VALIDATION_FAILED");
    expect((refused as ApiRequestError).body).toContain("bgp.neighbors.0.multiHop");
    expect((await s.device("hub")).desiredHash).toBe(before.desiredHash);
    expect((await speakerPeers())[hubWan]?.state).not.toBe("Established");

    const t0 = performance.now();
    const set = await s.api.call("PUT", `/api/devices/${hub}`, JobsQueued, { body: { bgp: bgp(2) } });
    expect(set.status).toBe(202);
    await jobsComplete(s.api, set.data.jobIds);
    try {
      await waitFor(60_000, async () => {
        const peer = (await speakerPeers())[hubWan];
        return peer?.state === "Established" ? true : `speaker sees the hub as ${peer?.state ?? "absent"}`;
      });
      console.log(`scenario 4: multiHop 2 set → Established in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
      // Routes flow both ways: the speaker's network reaches the hub's kernel, the hub's LAN the speaker.
      await waitFor(30_000, async () => {
        const r = await s.sh("hub", ["ip", "-j", "route", "show", "10.200.0.0/24"]);
        return r.stdout.includes('"protocol":"bgp"') ? true : `hub has no BGP route to 10.200.0.0/24: ${r.stdout}`;
      });
      // The hub advertises its LAN: the speaker's BGP table has it from AS 65001 with the hub's WAN as next
      // hop. (Whether the stock speaker then installs it in its kernel is its own next-hop tracking, outside
      // Tern: twice under CI load it held the route unresolved for over a minute while the hub had advertised
      // it; that is printed, not failed.)
      const dir = join(s.lab.dir, "nodes", "bgp-peer", "frr");
      await waitFor(60_000, async () => {
        const r = await s.sh("bgp-peer", vtyshArgv(dir, "show bgp ipv4 unicast 10.10.0.0/24 json"));
        const entry = JSON.parse(r.stdout || "{}") as {
          paths?: { aspath?: { string?: string }; nexthops?: { ip?: string }[] }[];
        };
        const fromHub = entry.paths?.some((p) => p.aspath?.string === "65001" && p.nexthops?.some((n) => n.ip === hubWan));
        return fromHub ? true : `speaker has not received the hub's LAN: ${r.stdout.slice(0, 500)}`;
      }).catch(async (err: Error) => {
        // Why not: what each side's BGP holds for the prefix, and the hub's own route to its LAN.
        throw new Error(`${err.message}\n${await lanRouteDiagnostics()}`);
      });
      const installed = await waitFor(30_000, async () => {
        const r = await s.sh("bgp-peer", ["ip", "-j", "route", "show", "10.10.0.0/24"]);
        return r.stdout.includes('"protocol":"bgp"') ? true : "not in the speaker's kernel";
      }).then(
        () => true,
        () => false,
      );
      if (!installed) console.warn(`scenario 4: the speaker did not install the hub's LAN\n${await lanRouteDiagnostics()}`);

      // What the admin sees.
      const shown = await live.wait("GET /devices/{id}/bgp/status Established", 60_000, async () => {
        const st = await s.api.get(`/api/devices/${hub}/bgp/status`, BgpStatusResponse);
        if (st.state === "unknown") return `source ${st.source}, state unknown`;
        const n = st.state.neighbors.find((x) => x.ip === speaker);
        return n?.state === "Established" && (n.prefixesReceived ?? 0) >= 1 && st.state.running && st.state.localASN === 65001
          ? true
          : `source ${st.source}, neighbours ${JSON.stringify(st.state.neighbors)}`;
      });
      const st = await s.api.get(`/api/devices/${hub}/bgp/status`, BgpStatusResponse);
      if (shown && st.state !== "unknown") {
        expect(["live", "reported"]).toContain(st.source);
        const n = st.state.neighbors.find((x) => x.ip === speaker)!;
        expect(n).toMatchObject({ remoteASN: 65100, state: "Established" });
        expect(n.prefixesReceived).toBeGreaterThanOrEqual(1);
      }
    } finally {
      // BGP off through the API stops the session.
      const off = await s.api.call("PUT", `/api/devices/${hub}`, JobsQueued, { body: { bgp: { ...bgp(2), enable: false } } });
      await jobsComplete(s.api, off.data.jobIds);
    }
    await waitFor(30_000, async () => ((await speakerPeers())[hubWan]?.state !== "Established" ? true : "still Established"));
    live.assertAll();
  });
});
