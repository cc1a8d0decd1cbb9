/** Golden FRR configs from the protocol's full sample, validation, and state parsing. */
import { readFileSync } from "node:fs";
import type { ConfigBgp } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { BgpDriver } from "../../src/drivers/bgp/driver.ts";
import {
  neighborsToReset,
  renderBgpdConf,
  renderIntegratedConf,
  renderZebraConf,
  withBgpd,
} from "../../src/drivers/bgp/render.ts";
import { bgpState, neighborState } from "../../src/drivers/bgp/state.ts";
import { validateBgp } from "../../src/drivers/bgp/validate.ts";
import { fullConfig } from "../support/configs.ts";

const bgp = fullConfig().bgp as ConfigBgp;

describe("bgp render (golden)", () => {
  it("standalone zebra.conf and bgpd.conf", async () => {
    await expect(renderZebraConf(bgp)).toMatchFileSnapshot("./golden/zebra.conf");
    await expect(renderBgpdConf(bgp)).toMatchFileSnapshot("./golden/bgpd.conf");
  });

  it("system frr.conf (integrated)", async () => {
    await expect(renderIntegratedConf(bgp)).toMatchFileSnapshot("./golden/frr.conf");
  });

  it("multihop, password and community per neighbor; nht only when a neighbor needs it", () => {
    const direct: ConfigBgp = {
      ...bgp,
      neighbors: [{ ip: "10.0.0.1", remoteAsn: 65009, password: "", multiHop: 1, sendCommunity: true }],
    };
    const conf = renderBgpdConf(direct);
    expect(conf).not.toMatch(/ebgp-multihop|password|send-community/);
    expect(renderZebraConf(direct)).not.toMatch(/nht/);
    const ibgp: ConfigBgp = {
      ...direct,
      neighbors: [{ ...direct.neighbors[0]!, remoteAsn: bgp.asn, multiHop: 5, password: "k3y!" }],
    };
    expect(renderBgpdConf(ibgp)).toMatch(/neighbor 10\.0\.0\.1 password k3y!\n/);
    expect(renderBgpdConf(ibgp)).not.toMatch(/ebgp-multihop/);
    expect(renderZebraConf(ibgp)).toMatch(/^ip nht resolve-via-default$/m);
  });

  it("plans the daemons' start from scratch", async () => {
    const plan = new BgpDriver().plan(fullConfig(), { mode: "standalone", runDir: "/run/tern", stateDir: "/var/lib/tern" });
    expect(plan.files.map((f) => [f.path, f.mode.toString(8)])).toEqual([
      ["zebra.conf", "644"],
      ["bgpd.conf", "600"],
      ["vtysh.conf", "644"],
    ]);
    await expect(`${plan.commands.map((c) => c.join(" ")).join("\n")}\n`).toMatchFileSnapshot("./golden/plan-standalone.txt");
  });
});

describe("bgp validation and diffs", () => {
  it("refuses bad input with INVALID_CONFIG and a path", () => {
    const check = (b: ConfigBgp, path: string) => {
      try {
        validateBgp(b);
        throw new Error("accepted");
      } catch (e) {
        expect(e).toMatchObject({ code: "INVALID_CONFIG", path });
      }
    };
    const n = bgp.neighbors[0]!;
    check({ ...bgp, keepalive: 30, hold: 9 }, "bgp.keepalive");
    check({ ...bgp, neighbors: [n, n] }, "bgp.neighbors.1.ip");
    check({ ...bgp, neighbors: [{ ...n, password: "two words" }] }, "bgp.neighbors.0.password");
    check({ ...bgp, networks: ["10.0.0.0/8", "10.0.0.0/8"] }, "bgp.networks.1");
  });

  it("resets only neighbors whose session settings changed", () => {
    const two: ConfigBgp = { ...bgp, neighbors: [bgp.neighbors[0]!, { ...bgp.neighbors[0]!, ip: "10.9.9.9" }] };
    const before = renderBgpdConf(two);
    const after = renderBgpdConf({
      ...two,
      networks: ["10.1.0.0/16"],
      neighbors: [{ ...two.neighbors[0]!, multiHop: 3 }, two.neighbors[1]!],
    });
    expect(neighborsToReset(before, after)).toEqual(["10.100.2.2"]);
    expect(neighborsToReset(null, after)).toEqual([]);
    expect(neighborsToReset(before, renderBgpdConf({ ...two, networks: [] }))).toEqual([]);
  });

  it("switches bgpd on in /etc/frr/daemons and keeps the rest", () => {
    expect(withBgpd("zebra=yes\nbgpd=no\nospfd=no\n", true)).toBe("zebra=yes\nbgpd=yes\nospfd=no\n");
    expect(withBgpd("zebra=yes\n", true)).toBe("zebra=yes\nbgpd=yes\n");
  });
});

describe("bgp state from FRR", () => {
  const summary = readFileSync(new URL("fixtures/summary.json", import.meta.url), "utf8");
  const config: ConfigBgp = {
    ...bgp,
    asn: 65002,
    neighbors: [
      { ip: "10.100.1.2", remoteAsn: 65001, password: "", multiHop: 2, sendCommunity: true },
      { ip: "10.100.3.2", remoteAsn: 65003, password: "", multiHop: 1, sendCommunity: true },
      { ip: "10.100.4.2", remoteAsn: 65004, password: "", multiHop: 1, sendCommunity: true },
    ],
  };

  it("maps show bgp summary json to the protocol BgpState", () => {
    expect(bgpState(config, summary)).toEqual({
      running: true,
      routerId: "10.100.0.5",
      localASN: 65002,
      neighbors: [
        { ip: "10.100.1.2", remoteASN: 65001, state: "Established", uptimeSeconds: 2, prefixesReceived: 1, prefixesSent: 2 },
        { ip: "10.100.3.2", remoteASN: 65003, state: "Idle", uptimeSeconds: 0, prefixesReceived: 0, prefixesSent: 0 },
        { ip: "10.100.4.2", remoteASN: 65004, state: "Unknown", uptimeSeconds: 0, prefixesReceived: 0, prefixesSent: 0 },
      ],
    });
  });

  it("reports a stopped bgpd as not running, with the configured ids", () => {
    expect(bgpState(config, null)).toMatchObject({ running: false, routerId: bgp.routerId, localASN: 65002 });
    expect(bgpState(config, "% garbage")).toMatchObject({
      running: true,
      neighbors: [{ state: "Unknown" }, { state: "Unknown" }, { state: "Unknown" }],
    });
    expect(neighborState("Clearing")).toBe("Unknown");
  });
});
