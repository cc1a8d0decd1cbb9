/** Golden render of the protocol's full sample: strongSwan files per mode and dataplane, and the plan. */
import { basename } from "node:path";
import { describe, expect, it } from "vitest";
import { Ikev2Driver } from "../../src/drivers/ikev2/driver.ts";
import { ikev2Paths } from "../../src/drivers/ikev2/paths.ts";
import { desiredPlumbing, plumbingCommands } from "../../src/drivers/ikev2/plumbing.ts";
import { espProposals } from "../../src/drivers/ikev2/proposals.ts";
import { lifetimes, renderIkev2 } from "../../src/drivers/ikev2/render.ts";
import { validateTunnels } from "../../src/drivers/ikev2/validate.ts";
import type { AgentError } from "../../src/errors.ts";
import { fullConfig } from "../support/configs.ts";

const RUN = "/run/tern";
const tunnels = fullConfig().tunnels;
const live = new Map([
  ["wan0", "10.100.1.2"],
  ["wan1", "10.101.1.2"],
]);

describe("ikev2 render (golden)", () => {
  for (const [mode, dataplane] of [
    ["standalone", "libipsec"],
    ["standalone", "xfrm"],
    ["system", "libipsec"],
  ] as const) {
    it(`${mode} / ${dataplane}`, async () => {
      const r = renderIkev2(tunnels, dataplane, ikev2Paths(mode, RUN, "/"), live);
      const dir = `./golden/${mode}-${dataplane}`;
      await expect(r.daemonConf.content).toMatchFileSnapshot(`${dir}/${basename(r.daemonConf.path)}`);
      if (r.swanctlConf) await expect(r.swanctlConf.content).toMatchFileSnapshot(`${dir}/swanctl.conf`);
      for (const c of r.conns) {
        expect(c.file.mode).toBe(0o600);
        await expect(c.file.content).toMatchFileSnapshot(`${dir}/${c.name}.conf`);
      }
      expect(r.conns.map((c) => c.file.path)).toEqual(
        mode === "standalone"
          ? ["conns/tern-device-1.conf", "conns/tern-peer-2.conf"]
          : ["/etc/swanctl/conf.d/tern-device-1.conf", "/etc/swanctl/conf.d/tern-peer-2.conf"],
      );
    });
  }

  it("pins local_addrs to the WAN interface's live address, not the server's idea of it", () => {
    const r = renderIkev2(tunnels, "libipsec", ikev2Paths("standalone", RUN), new Map([["wan1", "10.101.1.99"]]));
    expect(r.conns[1]?.file.content).toMatch(/local_addrs = 10\.101\.1\.99\n/);
    expect(r.conns[1]?.file.content).toMatch(/mobike = no/);
  });

  it("leaves out a tunnel whose WAN has no address yet", () => {
    const peerless = tunnels.map((t) => ({ ...t, localAddress: null }));
    const r = renderIkev2(peerless, "libipsec", ikev2Paths("standalone", RUN), new Map([["wan0", "10.100.1.2"]]));
    expect(r.conns.map((c) => c.name)).toEqual(["tern-device-1"]);
    expect(r.waiting.map((t) => t.num)).toEqual([2]);
  });

  it("plans files and commands from scratch without touching the system", async () => {
    const plan = new Ikev2Driver({ dataplane: "libipsec" }).plan(fullConfig(), {
      mode: "standalone",
      runDir: RUN,
      stateDir: "/var/lib/tern",
    });
    expect(plan.files.map((f) => [f.path, f.mode.toString(8)])).toEqual([
      ["strongswan.conf", "644"],
      ["swanctl.conf", "644"],
      ["conns/tern-device-1.conf", "600"],
      ["conns/tern-peer-2.conf", "600"],
    ]);
    await expect(`${plan.commands.map((c) => c.join(" ")).join("\n")}\n`).toMatchFileSnapshot("./golden/plan-standalone.txt");
  });
});

describe("PFS, lifetimes and validation", () => {
  it("adds the IKE DH group to the ESP proposal when PFS is on and strips DH groups when off", () => {
    expect(espProposals({ proposal: "aes256-sha256", pfs: true }, "aes256-sha256-modp2048", "t")).toBe("aes256-sha256-modp2048");
    expect(espProposals({ proposal: "aes256gcm16-ecp256", pfs: true }, "aes256-sha256-modp2048", "t")).toBe("aes256gcm16-ecp256");
    expect(espProposals({ proposal: "aes256-sha256-modp2048, aes128-sha1", pfs: false }, "x-modp2048", "t")).toBe(
      "aes256-sha256,aes128-sha1",
    );
  });

  it("maps lifetimes to rekey_time with 10 % margin", () => {
    expect(lifetimes(28800)).toEqual({ rekey: 28800, margin: 2880, life: 31680 });
    expect(lifetimes(8)).toEqual({ rekey: 8, margin: 1, life: 9 });
  });

  it("refuses bad input with INVALID_CONFIG and the path, before anything runs", () => {
    const bad = (patch: object, path: string) => {
      const t = [{ ...tunnels[0], ...patch } as (typeof tunnels)[number]];
      const err = (() => {
        try {
          validateTunnels(t);
        } catch (e) {
          return e as AgentError;
        }
        return null;
      })();
      expect(err?.code).toBe("INVALID_CONFIG");
      expect(err?.path).toBe(path);
    };
    bad(
      {
        esp: { proposal: "aes256-sha256", lifetimeSeconds: 3600, pfs: true },
        ike: { proposal: "aes256-sha256", lifetimeSeconds: 60 },
      },
      "tunnels.0.esp.pfs",
    );
    bad({ ike: { proposal: "aes256-sha256-modp2048\n}", lifetimeSeconds: 60 } }, "tunnels.0.ike.proposal");
    bad({ auth: { psk: "", localId: "a", remoteId: "b" } }, "tunnels.0.auth.psk");
    bad({ auth: { psk: "x", localId: "a\nb", remoteId: "b" } }, "tunnels.0.auth.localId");
    bad({ remoteLoopback: tunnels[0]?.localLoopback }, "tunnels.0.remoteLoopback");
    expect(() => validateTunnels([tunnels[0]!, { ...tunnels[0]!, localLoopback: "10.100.0.8" }])).toThrow(
      /number 1 is used twice/,
    );
  });

  it("escapes identities so they cannot break out of the quoted string", () => {
    const t = { ...tunnels[0]!, auth: { psk: 'p"s}k', localId: 'we"ird\\id', remoteId: "b" } };
    const r = renderIkev2([t], "libipsec", ikev2Paths("standalone", RUN), live);
    expect(r.conns[0]?.file.content).toContain('id = "we\\"ird\\\\id"');
    expect(r.conns[0]?.file.content).toContain(`secret = 0s${Buffer.from('p"s}k').toString("base64")}`);
  });
});

describe("kernel plumbing plan", () => {
  it("libipsec: loopbacks on lo, a stand-in for local subnets without an address, routes via ipsec0", () => {
    const d = desiredPlumbing(tunnels, "libipsec", ["10.100.1.2", "192.168.50.2"]);
    expect(d.addresses.map((a) => `${a.dev} ${a.cidr} ${a.label}`)).toEqual([
      "lo 10.100.0.4/32 lo:tern-ike",
      "lo 10.100.0.6/32 lo:tern-ike",
      "lo 10.50.0.0/32 lo:tern-ike",
    ]);
    expect(d.routes.map((r) => `${r.dst} ${r.dev} ${r.src}`)).toEqual([
      "10.100.0.5/32 ipsec0 10.100.0.4",
      "10.60.0.0/24 ipsec0 10.100.0.4",
      "10.100.0.7/32 ipsec0 10.100.0.6",
      "192.168.90.0/24 ipsec0 10.100.0.6",
    ]);
  });

  it("xfrm: one interface per tunnel with the /31, routes to subnets through it", () => {
    const d = desiredPlumbing(tunnels, "xfrm");
    expect(d.links).toEqual([
      { name: "xfrm-d1", parent: "wan0", ifId: 2 },
      { name: "xfrm-p2", parent: "wan1", ifId: 1048579 },
    ]);
    expect(d.addresses.map((a) => `${a.dev} ${a.cidr}`)).toEqual(["xfrm-d1 10.100.0.4/31", "xfrm-p2 10.100.0.6/31"]);
    const cmds = plumbingCommands({ links: [], addresses: [], routes: [] }, d);
    expect(cmds.links[0]).toEqual(["ip", "link", "add", "xfrm-d1", "type", "xfrm", "dev", "wan0", "if_id", "2"]);
    expect(cmds.routes.map((c) => c.join(" "))).toEqual([
      "ip route replace 10.60.0.0/24 dev xfrm-d1 src 10.100.0.4 table main proto 58",
      "ip route replace 192.168.90.0/24 dev xfrm-p2 src 10.100.0.6 table main proto 58",
    ]);
  });

  it("changes only the difference", () => {
    const d = desiredPlumbing(tunnels, "libipsec", ["10.50.0.1"]);
    expect(plumbingCommands({ ...d }, d)).toEqual({ links: [], routes: [] });
    const stale = {
      links: [],
      addresses: [...d.addresses, { dev: "lo", cidr: "10.100.0.8/32", label: "lo:tern-ike" }],
      routes: [...d.routes, { dst: "10.99.0.0/24", dev: "ipsec0", src: "10.100.0.4" }],
    };
    expect(plumbingCommands(stale, d)).toEqual({
      links: [["ip", "addr", "del", "10.100.0.8/32", "dev", "lo"]],
      routes: [["ip", "route", "del", "10.99.0.0/24", "table", "main", "proto", "58"]],
    });
  });
});
