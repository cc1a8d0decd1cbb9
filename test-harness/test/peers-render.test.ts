import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderBgpdConf, renderZebraConf } from "../src/lab/peers/frr.ts";
import { renderStrongswanConf, renderSwanctlConf } from "../src/lab/peers/strongswan.ts";
import { planLab } from "../src/plan/address-plan.ts";
import { parseTopology } from "../src/topology/index.ts";

const planOf = (name: string) =>
  planLab(parseTopology(readFileSync(join(import.meta.dirname, "..", "topologies", `${name}.yaml`), "utf8"))).plan!;

describe("stock peer configuration", () => {
  it("renders swanctl.conf with the peer's lifetimes, identities and a PFS group on ESP", () => {
    const peer = planOf("ikev2-peer").peers[0]!;
    if (peer.kind !== "strongswan") throw new Error("expected strongswan");
    const conf = renderSwanctlConf(peer);
    expect(conf).toContain("local_addrs = 100.64.2.2");
    expect(conf).toContain("remote_addrs = 100.64.1.2");
    expect(conf).toContain("rekey_time = 28800s");
    expect(conf).toContain("esp_proposals = aes256-sha256-modp2048");
    expect(conf).toContain("local_ts = 10.250.0.0/24");
    expect(conf).toContain("remote_ts = 192.168.10.0/24");
    expect(conf).toMatch(/id-a = dc-gw\.lab\s+id-b = site-a\.lab\s+secret = "tern-lab-peer-secret-42"/);
    const noPfs = renderSwanctlConf({ ...peer, config: { ...peer.config, pfs: false } });
    expect(noPfs).toContain("esp_proposals = aes256-sha256\n");
  });

  it("confines kernel-libipsec's routing rule and gives each charon its own vici socket", () => {
    const conf = renderStrongswanConf("/lab/x/nodes/gw/strongswan");
    expect(conf).toContain("kernel-netlink { fwmark = 0x4242 }");
    expect(conf).toContain("vici { socket = unix:///lab/x/nodes/gw/strongswan/charon.vici }");
    expect(conf).toContain("kernel-libipsec");
  });

  it("renders bgpd.conf with multihop for a neighbor two hops away and zebra resolving via default", () => {
    const peer = planOf("hub-spokes").peers[0]!;
    if (peer.kind !== "frr") throw new Error("expected frr");
    const bgpd = renderBgpdConf(peer);
    expect(bgpd).toContain("router bgp 65100");
    expect(bgpd).toContain(" neighbor 100.64.1.2 remote-as 65001");
    expect(bgpd).toContain(" neighbor 100.64.1.2 ebgp-multihop 2");
    expect(bgpd).toContain("  network 10.200.0.0/24");
    expect(renderZebraConf(peer)).toContain("ip nht resolve-via-default");
  });
});
