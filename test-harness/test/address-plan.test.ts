import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planLab } from "../src/plan/address-plan.ts";
import type { LabPlan } from "../src/plan/types.ts";
import { parseTopology, Topology, type TopologyInput } from "../src/topology/index.ts";

const TOPOLOGIES = join(import.meta.dirname, "..", "topologies");
const example = (name: string): LabPlan => planLab(parseTopology(readFileSync(join(TOPOLOGIES, `${name}.yaml`), "utf8"))).plan!;
const plan = (input: TopologyInput) => planLab(Topology.parse(input));

const addressesOf = (p: LabPlan, node: string) => p.addresses.filter((a) => a.node === node).map((a) => `${a.ifname} ${a.cidr}`);
const routesOf = (p: LabPlan, node: string) =>
  p.routes
    .filter((r) => r.node === node)
    .map((r) => `${r.dst} via ${r.via} dev ${r.dev}${r.metric ? ` metric ${r.metric}` : ""}`);

describe("address plan", () => {
  it("gives each cloud attachment its own /24: cloud .1, router .2", () => {
    const p = example("two-sites");
    expect(p.attachments.map((a) => [a.id, a.subnet, a.gateway, a.address, a.cloudIf, a.nodeIf])).toEqual([
      ["inet:site-a", "100.64.1.0/24", "100.64.1.1", "100.64.1.2/24", "site-a", "wan0"],
      ["inet:site-b", "100.64.2.0/24", "100.64.2.1", "100.64.2.2/24", "site-b", "wan0"],
    ]);
    expect(addressesOf(p, "inet")).toEqual(["site-a 100.64.1.1/24", "site-b 100.64.2.1/24"]);
    expect(addressesOf(p, "site-a")).toEqual(["wan0 100.64.1.2/24", "lan0 192.168.10.1/24"]);
    expect(routesOf(p, "site-a")).toEqual(["default via 100.64.1.1 dev wan0 metric 100"]);
    expect(routesOf(p, "lan-a-h1")).toEqual(["default via 192.168.10.1 dev eth0"]);
    expect(addressesOf(p, "lan-a-h1")).toEqual(["eth0 192.168.10.10/24"]);
    expect(p.bridges).toContainEqual({ node: "lan-a", ifname: "br0", ports: ["site-a", "lan-a-h1"] });
    expect(p.nodes.map((n) => `${n.name}:${n.kind}:${n.forwarding}`)).toEqual([
      "inet:cloud:true",
      "site-a:edge:true",
      "site-b:edge:true",
      "lan-a:switch:false",
      "lan-b:switch:false",
      "lan-a-h1:host:false",
      "lan-b-h1:host:false",
      "lan-b-pc:host:false",
    ]);
    expect(addressesOf(p, "lan-b-pc")).toEqual([]);
    expect(p.control).toEqual({ via: "local" });
  });

  it("inherits the cloud's impairment unless the attachment sets its own, and numbers queues uniquely", () => {
    const p = plan({
      name: "imp",
      clouds: [{ name: "inet", impairment: { delayMs: 10 } }, { name: "isp2" }],
      edges: [
        { name: "site-a", wan: [{ cloud: "inet" }, { cloud: "isp2" }] },
        { name: "site-b", wan: [{ cloud: "inet", impairment: { lossPercent: 5 } }, { cloud: "isp2" }] },
      ],
    }).plan!;
    const byId = Object.fromEntries(p.attachments.map((a) => [a.id, a]));
    expect(byId["inet:site-a"]!.impairment).toEqual({ lossPercent: 0, delayMs: 10, jitterMs: 0, rateMbit: null });
    expect(byId["inet:site-b"]!.impairment).toEqual({ lossPercent: 5, delayMs: 0, jitterMs: 0, rateMbit: null });
    expect(byId["isp2:site-a"]!.impairment.delayMs).toBe(0);
    expect(new Set(p.attachments.map((a) => a.queue)).size).toBe(4);
  });

  it("routes a second WAN's cloud through that WAN and gives each WAN a default route by metric", () => {
    const p = example("dual-wan");
    expect(routesOf(p, "site-a")).toEqual([
      "default via 100.64.1.1 dev wan0 metric 100",
      "default via 100.65.1.1 dev wan1 metric 200",
      "100.65.0.0/16 via 100.65.1.1 dev wan1 metric 200",
    ]);
    expect(addressesOf(p, "site-b")).toEqual(["wan0 100.64.2.2/24", "wan1 100.65.2.2/24", "lan0 192.168.20.1/24"]);
  });

  it("keeps explicit addresses and gateways, allocates around them, and routes explicit subnets outside the prefix", () => {
    const p = plan({
      name: "expl",
      clouds: [{ name: "inet", prefix: "100.64.0.0/16" }],
      edges: [
        { name: "e1", wan: [{ cloud: "inet" }] },
        { name: "e2", wan: [{ cloud: "inet", address: "100.64.1.9/24", gateway: "100.64.1.254" }] },
        { name: "e3", wan: [{ cloud: "inet", address: "203.0.113.2/30", metric: 50 }] },
        { name: "e4", wan: [{ cloud: "inet", defaultRoute: false }, { cloud: "other" }] },
      ],
    });
    expect(p.plan).toBeNull();
    // "other" does not exist: references are checked before any address is given out.
    expect(p.issues).toEqual([{ path: ["edges", 3, "wan", 1, "cloud"], message: "unknown cloud 'other'" }]);

    const ok = plan({
      name: "expl",
      clouds: [{ name: "inet", prefix: "100.64.0.0/16" }, { name: "other" }],
      edges: [
        { name: "e1", wan: [{ cloud: "inet" }] },
        { name: "e2", wan: [{ cloud: "inet", address: "100.64.1.9/24", gateway: "100.64.1.254" }] },
        { name: "e3", wan: [{ cloud: "inet", address: "203.0.113.2/30", metric: 50 }] },
        { name: "e4", wan: [{ cloud: "other" }, { cloud: "inet", defaultRoute: false }] },
      ],
    }).plan!;
    const att = Object.fromEntries(ok.attachments.map((a) => [a.id, `${a.address} gw ${a.gateway}`]));
    expect(att).toEqual({
      "inet:e1": "100.64.2.2/24 gw 100.64.2.1", // 100.64.1.0/24 is e2's
      "inet:e2": "100.64.1.9/24 gw 100.64.1.254",
      "inet:e3": "203.0.113.2/30 gw 203.0.113.1",
      "inet:e4": "100.64.3.2/24 gw 100.64.3.1",
      "other:e4": "100.65.1.2/24 gw 100.65.1.1",
    });
    expect(routesOf(ok, "e3")).toEqual(["default via 203.0.113.1 dev wan0 metric 50"]);
    // e4's inet attachment carries no default route: it reaches the cloud (prefix and the explicit /30) through it.
    expect(routesOf(ok, "e4")).toEqual([
      "default via 100.65.1.1 dev wan0 metric 100",
      "100.64.0.0/16 via 100.64.3.1 dev wan1 metric 200",
      "203.0.113.0/30 via 100.64.3.1 dev wan1 metric 200",
    ]);
  });

  it("uses /30 subnets in a small cloud and reports when it is full", () => {
    const small = plan({
      name: "small",
      clouds: [{ name: "inet", prefix: "10.0.0.0/29" }],
      edges: [
        { name: "e1", wan: [{ cloud: "inet" }] },
        { name: "e2", wan: [{ cloud: "inet" }] },
      ],
    }).plan!;
    expect(small.attachments.map((a) => a.address)).toEqual(["10.0.0.2/30", "10.0.0.6/30"]);
    const full = plan({
      name: "full",
      clouds: [{ name: "inet", prefix: "10.0.0.0/29" }],
      edges: ["e1", "e2", "e3"].map((name) => ({ name, wan: [{ cloud: "inet" }] })),
    });
    expect(full.issues).toEqual([
      { path: ["edges", 2, "wan", 0, "cloud"], message: "cloud 'inet' (10.0.0.0/29) has no free subnet left" },
    ]);
  });

  it("plans a VRRP LAN: explicit router addresses, the virtual IP reserved as the hosts' gateway, a DHCP host without address", () => {
    const p = example("vrrp-pair");
    const office = p.lanAttachments.filter((a) => a.lan === "office").map((a) => `${a.node}/${a.nodeIf}=${a.address}`);
    expect(office).toEqual([
      "vr-a/lan0=192.168.70.2/24",
      "vr-b/lan0=192.168.70.3/24",
      "office-h1/eth0=192.168.70.10/24",
      "office-h2/eth0=null",
    ]);
    expect(routesOf(p, "office-h1")).toEqual(["default via 192.168.70.1 dev eth0"]);
    expect(routesOf(p, "office-h2")).toEqual([]);
    expect(p.bridges.find((b) => b.node === "office")?.ports).toEqual(["vr-a", "vr-b", "office-h1", "office-h2"]);
  });

  it("never hands out the LAN gateway (virtual IP) as a router's generated address", () => {
    const p = plan({
      name: "vip",
      clouds: [{ name: "inet" }],
      edges: [
        { name: "r1", wan: [{ cloud: "inet" }], lan: [{ lan: "office" }] },
        { name: "r2", wan: [{ cloud: "inet" }], lan: [{ lan: "office" }] },
      ],
      lans: [{ name: "office", subnet: "192.168.1.0/24", gateway: "192.168.1.1", hosts: 0 }],
    }).plan!;
    expect(p.lanAttachments.map((a) => a.address)).toEqual(["192.168.1.2/24", "192.168.1.3/24"]);
  });

  it("rejects LAN addresses outside the subnet or used twice", () => {
    const r = plan({
      name: "bad",
      clouds: [{ name: "inet" }],
      edges: [
        { name: "r1", wan: [{ cloud: "inet" }], lan: [{ lan: "office", address: "192.168.2.1/24" }] },
        { name: "r2", wan: [{ cloud: "inet" }], lan: [{ lan: "office", address: "192.168.1.5/24" }] },
      ],
      lans: [{ name: "office", subnet: "192.168.1.0/24", hosts: [{ name: "pc", address: "192.168.1.5/24" }] }],
    });
    expect(r.issues).toEqual([
      {
        path: ["edges", 0, "lan", 0, "address"],
        message: "192.168.2.1/24 is not a host address of the lan subnet 192.168.1.0/24",
      },
      { path: ["lans", 0, "hosts", 0, "address"], message: "192.168.1.5/24 is used twice on lan 'office'" },
    ]);
  });

  it("rejects a router whose WAN and LAN subnets overlap", () => {
    const r = plan({
      name: "ovl",
      clouds: [{ name: "inet", prefix: "192.168.0.0/16" }],
      edges: [{ name: "r1", wan: [{ cloud: "inet" }], lan: [{ lan: "office" }] }],
      lans: [{ name: "office", subnet: "192.168.1.0/24" }],
    });
    expect(r.issues).toEqual([{ path: ["edges", 0, "lan", 0], message: "192.168.1.1/24 overlaps 192.168.1.2/24 on 'r1'" }]);
  });

  it("resolves a strongSwan peer's ends and defaults from the shared cloud and its LAN", () => {
    const p = example("ikev2-peer");
    expect(p.peers).toEqual([
      expect.objectContaining({
        kind: "strongswan",
        node: "dc-gw",
        localAddress: "100.64.2.2",
        remoteAddress: "100.64.1.2",
        routedRemoteTs: ["192.168.10.0/24"],
        routeSource: "10.250.0.1",
        config: expect.objectContaining({
          localId: "dc-gw.lab",
          remoteId: "site-a.lab",
          localTs: ["10.250.0.0/24"],
          ikeLifeTime: 28800,
          pfs: true,
        }),
      }),
    ]);
  });

  it("resolves an FRR peer's neighbor by node name and announces its LAN by default", () => {
    const p = example("hub-spokes");
    const frr = p.peers[0]!;
    expect(frr.kind).toBe("frr");
    if (frr.kind !== "frr") return;
    expect(frr.neighbors).toEqual([{ address: "100.64.1.2", remoteAs: 65001, multihop: 2, password: undefined }]);
    expect(frr.config.routerId).toBe("100.64.4.2");
    expect(frr.config.networks).toEqual(["10.200.0.0/24"]);
  });

  it("puts a management node on the cloud when control runs over the WAN", () => {
    const p = plan({
      name: "ctl",
      clouds: [{ name: "inet", impairment: { delayMs: 20 } }],
      edges: [{ name: "e1", wan: [{ cloud: "inet" }] }],
      control: { cloud: "inet" },
    }).plan!;
    expect(p.control).toEqual({ via: "cloud", cloud: "inet", node: "mgmt", address: "100.64.2.2" });
    expect(p.nodes.find((n) => n.name === "mgmt")).toEqual({ name: "mgmt", kind: "mgmt", forwarding: false });
    expect(p.attachments.find((a) => a.node === "mgmt")?.impairment.delayMs).toBe(20);
    expect(p.edges).toEqual(["e1"]);
  });
});
