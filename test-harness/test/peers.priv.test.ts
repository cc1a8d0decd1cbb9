/**
 * Non-managed peers with real daemons: two stock strongSwan gateways bring up
 * an IKEv2 tunnel between their LANs, and two stock FRR speakers two hops
 * apart reach Established with ebgp-multihop 2 and exchange a prefix.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Netns, privilegedTestsEnabled } from "@tern/netlab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { labDown } from "../src/lab/down.ts";
import type { Lab } from "../src/lab/lab.ts";
import { vtyshArgv } from "../src/lab/peers/frr.ts";
import { strongswanPaths } from "../src/lab/peers/strongswan.ts";
import { labUp } from "../src/lab/up.ts";
import { leftovers, ping, tempStateRoot } from "./helpers.ts";

const enabled = privilegedTestsEnabled("lab: stock peers", [
  "ip",
  "nft",
  "iptables",
  "gcc",
  "charon-systemd",
  "swanctl",
  "vtysh",
]);

const TOPOLOGY = `name: peers
clouds:
  - name: inet
    impairment: { delayMs: 2 }
lans:
  - { name: lan1, subnet: 10.201.0.0/24 }
  - { name: lan2, subnet: 10.202.0.0/24 }
peers:
  - name: gw1
    kind: strongswan
    wan: [{ cloud: inet }]
    lan: [{ lan: lan1 }]
    strongswan: { remote: gw2, localId: gw1.lab, remoteId: gw2.lab, remoteTs: [10.202.0.0/24], startAction: start }
  - name: gw2
    kind: strongswan
    wan: [{ cloud: inet }]
    lan: [{ lan: lan2 }]
    strongswan: { remote: gw1, localId: gw2.lab, remoteId: gw1.lab, remoteTs: [10.201.0.0/24] }
  - name: bgp1
    kind: frr
    wan: [{ cloud: inet }]
    frr: { asn: 65101, networks: [10.210.0.0/24], neighbors: [{ address: bgp2, remoteAs: 65102, multihop: 2 }] }
  - name: bgp2
    kind: frr
    wan: [{ cloud: inet }]
    frr: { asn: 65102, neighbors: [{ address: bgp1, remoteAs: 65101, multihop: 2 }] }
`;

describe.runIf(enabled)("lab: stock strongSwan and FRR peers", { timeout: 120_000 }, () => {
  let root: Awaited<ReturnType<typeof tempStateRoot>>;
  let lab: Lab;

  beforeAll(async () => {
    root = await tempStateRoot();
    const file = join(root.root, "peers.yaml");
    await writeFile(file, TOPOLOGY);
    const r = await labUp(file, { stateRoot: root.root, control: false });
    lab = r.lab;
    console.log(`peers lab up in ${(r.totalMs / 1000).toFixed(2)}s`);
  }, 120_000);

  afterAll(async () => {
    if (lab) {
      const { label, id } = lab.store.state;
      await labDown(root.root, lab.name);
      expect(await leftovers(label, id)).toEqual({ namespaces: [], processes: [] });
    }
    await root?.remove();
  });

  it("brings up an IKEv2 tunnel between two stock gateways and carries LAN traffic through it", async () => {
    const vici = strongswanPaths(join(lab.dir, "nodes", "gw1", "strongswan")).vici;
    const gw1 = lab.ns("gw1");
    await Netns.waitFor(
      "the IKE and CHILD SA",
      async () => {
        const sas = await gw1.exec(["swanctl", "--list-sas", "--uri", `unix://${vici}`], { allowFailure: true });
        return /ESTABLISHED/.test(sas.stdout) && /INSTALLED/.test(sas.stdout);
      },
      20_000,
    );
    // The cloud has no route to either LAN: only the tunnel can carry this.
    const p = await ping(lab.nsName("lan1-h1"), "10.202.0.10", 5, 0.05);
    expect(p.received).toBe(5);
    const sas = await gw1.exec(["swanctl", "--list-sas", "--uri", `unix://${vici}`]);
    expect(sas.stdout).toMatch(/local\s+'gw1\.lab' @ 100\.64\.1\.2/);
    expect(sas.stdout).toContain("10.201.0.0/24");
  });

  it("reaches BGP Established two hops away with ebgp-multihop 2 and learns the peer's prefix", async () => {
    const dir = join(lab.dir, "nodes", "bgp2", "frr");
    const bgp2 = lab.ns("bgp2");
    await Netns.waitFor(
      "BGP Established",
      async () => {
        const r = await bgp2.exec(vtyshArgv(dir, "show bgp summary json"), { allowFailure: true });
        return r.stdout.includes('"state":"Established"');
      },
      30_000,
    );
    const routes = await bgp2.exec(vtyshArgv(dir, "show bgp ipv4 unicast json"));
    expect(Object.keys((JSON.parse(routes.stdout) as { routes: Record<string, unknown> }).routes)).toContain("10.210.0.0/24");
  });
});
