/**
 * Issue 17, "react to the kernel": a WAN whose address changes is re-keyed
 * from the new address, and the far end (another managed device) is told.
 * On the two-sites lab (topologies/two-sites.yaml), site-b's wan0 is put on
 * DHCP, served by dnsmasq in the cloud router with one address (.100 of
 * site-b's WAN subnet, not the .2 it had). site-b's agent takes the lease,
 * reports the new address at once (kernel event), the server re-configures
 * site-a (gateway/live-state/wan-address.ts) and the tunnel comes back
 * ESTABLISHED to the new address on site-a and Connected in the API.
 * Printed: new address in site-b's kernel → site-a's config names it →
 * IKE SA to it on site-a → Connected in the API.
 */

import { join } from "node:path";
import { privilegedTestsEnabled } from "@tern/netlab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTunnel, ikeConns, ikeSas } from "./support/ikev2.ts";
import { getTunnel, JobsQueued, SCENARIO_COMMANDS, type ScenarioLab, upScenarioLab, waitFor } from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: a DHCP WAN re-addressed (far end re-configured)", [
  ...SCENARIO_COMMANDS,
  "dnsmasq",
]);

describe.runIf(enabled)("a re-addressed WAN: the far end follows (issue 17)", () => {
  let s: ScenarioLab;
  let pidFile = "";
  beforeAll(async () => {
    s = await upScenarioLab("two-sites.yaml");
  });
  afterAll(async () => {
    if (!s) return;
    if (pidFile) await s.sh("inet", ["sh", "-c", `kill $(cat ${pidFile}) 2>/dev/null; true`]);
    expect(await s.down()).toEqual({ namespaces: [], processes: [] });
  });

  it("site-b's WAN takes a new DHCP lease: site-a's tunnel comes back to the new address", async () => {
    const tunnel = await ensureTunnel(s, "site-a", "site-b");
    await waitFor(60_000, async () => {
      const sas = await ikeSas(s, "site-a");
      return /ESTABLISHED/.test(sas) ? true : `site-a: ${sas}`;
    });
    const att = s.lab.plan.attachments.find((a) => a.node === "site-b" && a.cloud === "inet")!;
    const old = att.address.split("/")[0]!;
    const fresh = old.replace(/\.\d+$/, ".100");
    pidFile = join(s.lab.dir, "wan-dnsmasq.pid");
    const dns = await s.sh("inet", [
      "dnsmasq",
      "--conf-file=/dev/null",
      "--port=0",
      `--interface=${att.cloudIf}`,
      "--bind-interfaces",
      `--dhcp-range=${fresh},${fresh},255.255.255.0,10m`,
      `--dhcp-option=3,${att.gateway}`,
      `--dhcp-leasefile=${join(s.lab.dir, "wan-dnsmasq.leases")}`,
      `--pid-file=${pidFile}`,
    ]);
    expect(dns.exitCode, dns.stderr).toBe(0);

    // The admin puts site-b's WAN on DHCP (as a site moving to a DHCP uplink would).
    const wan0 = await s.iface("site-b", "wan0");
    const put = await s.api.call("PUT", `/api/devices/${s.deviceId("site-b")}`, JobsQueued.partial(), {
      body: { interfaces: [{ ...wan0, dhcp: true }] },
    });
    expect(put.status).toBeLessThan(300);
    const t0 = performance.now();
    const since = (t: number) => `${((t - t0) / 1000).toFixed(2)} s`;
    let addressAt = 0;
    await waitFor(
      60_000,
      async () => {
        const text = (await s.sh("site-b", ["ip", "-4", "-o", "addr", "show", "dev", "wan0"])).stdout;
        if (!text.includes(`${fresh}/`)) return text || "no address";
        addressAt ||= performance.now();
        // The lease alone is the address: the static one is not kept beside it.
        return text.includes(`${old}/`) ? `old address still there: ${text}` : true;
      },
      20,
    );
    await waitFor(
      30_000,
      async () => ((await ikeConns(s, "site-a")).includes(fresh) ? true : "site-a's connection names the old address"),
      20,
    );
    const configAt = performance.now();
    await waitFor(
      60_000,
      async () => {
        const sas = await ikeSas(s, "site-a");
        // One IKE SA block per connection: its first line has the state, a later one the remote address.
        const blocks = sas.split(/\n(?=\S)/);
        return blocks.some((b) => /ESTABLISHED/.test(b) && b.includes(`@ ${fresh}[`)) ? true : `site-a: ${sas}`;
      },
      50,
    );
    const ikeAt = performance.now();
    const ikeWall = Date.now();
    // Connected from a report site-a made after the new SA was up (the one before the change does not count).
    await waitFor(60_000, async () => {
      const t = await getTunnel(s.api, tunnel.id);
      const recent = t.quality.a !== null && t.quality.a !== undefined && Date.parse(t.quality.a.at) > ikeWall;
      return t.status === "Connected" && recent ? true : `tunnel ${t.status}, site-a's report ${t.quality.a?.at ?? "none"}`;
    });
    const connectedAt = performance.now();
    console.log(
      `wan re-address: ${old} → ${fresh}: lease on site-b at ${since(addressAt)} after the PUT; ` +
        `site-a's config names it ${((configAt - addressAt) / 1000).toFixed(2)} s later, ` +
        `IKE SA to it after ${((ikeAt - addressAt) / 1000).toFixed(2)} s, Connected in the API after ${((connectedAt - addressAt) / 1000).toFixed(2)} s`,
    );
    const b = await s.iface("site-b", "wan0");
    expect(b.IPv4).toBe(fresh);
    expect(configAt - addressAt).toBeLessThan(5000);
  });
});
