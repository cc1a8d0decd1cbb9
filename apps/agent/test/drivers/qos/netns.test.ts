/**
 * Management QoS under a bulk flood, on a real kernel:
 *
 *   rtr (agent, 10.1.0.2) wan0 ── eth0 modem eth1 ── srv (10.9.0.2, probe responder)
 *                                       tbf 20 Mbit/s, 500 KB queue
 *
 * The modem is the line: its queue is where bufferbloat happens when the
 * router sends faster than 20 Mbit/s. With QoS on, the router shapes to 95 %
 * of the line (bandwidthMbps.tx 20), so the queue forms in its own HTB,
 * where probes are served first. The figures are printed; the assertions
 * are on correctness (classification) plus a generous ordering.
 */
import { type Netns, NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import type { DeviceConfig, TunnelReport } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QosDriver } from "../../../src/drivers/qos/index.ts";
import { type TestContext, testContext } from "../../support/context.ts";
import { labConfig, tunnel, wan } from "../../support/lab-configs.ts";
import { NetnsRunner } from "../../support/netns-runner.ts";
import { NsAgent } from "../../support/ns-agent-client.ts";

const enabled = privilegedTestsEnabled("qos netns test", ["nft", "tc"]);
type Report = { tunnels: TunnelReport[] };

describe.runIf(enabled)("management QoS under load in namespaces", () => {
  const scope = new NetnsScope("qos");
  let rtr: Netns;
  let modem: Netns;
  let srv: Netns;
  let agent: NsAgent;
  let responder: NsAgent;
  let ctx: TestContext;
  const driver = new QosDriver();
  const monitoring = { probeIntervalMs: 100, windowSize: 20, downAfterMs: 5000, statusIntervalMs: 5000 };
  const config = (qos: boolean): DeviceConfig =>
    labConfig((c) => {
      c.monitoring = monitoring;
      c.qos = { prioritizeManagement: qos };
      c.interfaces = [{ ...wan("wan0", "10.1.0.2/24", "10.1.0.1"), bandwidthMbps: { tx: 20, rx: 20 } }];
      c.tunnels = [tunnel({ id: "t1", localLoopback: "10.1.0.2", remoteLoopback: "10.9.0.2" })];
    });

  beforeAll(async () => {
    [rtr, modem, srv] = (await Promise.all(["rtr", "modem", "srv"].map((n) => scope.netns(n)))) as [Netns, Netns, Netns];
    await scope.veth(rtr, "wan0", modem, "eth0");
    await scope.veth(modem, "eth1", srv, "eth0");
    await rtr.addAddress("wan0", "10.1.0.2/24");
    await modem.addAddress("eth0", "10.1.0.1/24");
    await modem.addAddress("eth1", "10.9.0.1/24");
    await srv.addAddress("eth0", "10.9.0.2/24");
    await modem.sysctl("net.ipv4.ip_forward", "1");
    await rtr.exec(["ip", "route", "add", "default", "via", "10.1.0.1"]);
    await srv.exec(["ip", "route", "add", "default", "via", "10.9.0.1"]);
    await modem.exec(["tc", "qdisc", "add", "dev", "eth1", "root", "tbf", "rate", "20mbit", "burst", "20kb", "limit", "500kb"]);
    ctx = await testContext(new NetnsRunner(rtr.name), { controlServer: { address: "10.9.0.2", port: 8443 } });
    responder = new NsAgent(srv.name);
    await responder.call("configure", {
      config: labConfig((c) => {
        c.monitoring = monitoring;
        c.tunnels = [tunnel({ id: "t1", localLoopback: "10.9.0.2", remoteLoopback: "10.1.0.2", probeTargets: [] })];
      }),
    });
    agent = new NsAgent(rtr.name);
    await agent.call("configure", { config: config(true) });
  }, 30_000);

  afterAll(async () => {
    await agent?.stop();
    await responder?.stop();
    await ctx?.dispose();
    await scope.cleanup();
  });

  /** Floods 10.9.0.2:9 from rtr with ~45 Mbit/s of UDP for `ms`. */
  function flood(ms: number) {
    return rtr.exec(
      [
        process.execPath,
        "-e",
        `const s=require("dgram").createSocket("udp4");const b=Buffer.alloc(1400);const end=Date.now()+${ms};` +
          `const t=setInterval(()=>{for(let i=0;i<4;i++)s.send(b,9,"10.9.0.2",()=>{});if(Date.now()>end){clearInterval(t);setTimeout(()=>process.exit(0),100)}},1)`,
      ],
      { timeoutMs: ms + 10_000 },
    );
  }

  /** Window-mean probe RTT and loss after the window has filled under the current conditions. */
  async function measure(): Promise<{ rtt: number; loss: number }> {
    await new Promise((r) => setTimeout(r, 3500));
    const t = (await agent.call<Report>("report")).tunnels[0]!;
    return { rtt: t.rtt, loss: t.loss };
  }

  async function classSent(classid: string): Promise<number> {
    // iproute2 6.1 prints no JSON for HTB class stats: read "class htb 1:10 … \n Sent N bytes M pkt".
    const out = (await rtr.exec(["tc", "-s", "class", "show", "dev", "wan0"])).stdout;
    const m = new RegExp(`class htb ${classid} [^\\n]*\\n\\s*Sent \\d+ bytes (\\d+) pkt`).exec(out);
    return m ? Number(m[1]) : 0;
  }

  it("keeps probe RTT near the baseline under a bulk flood with QoS on, and not with QoS off", async () => {
    expect(await driver.apply(config(true), ctx)).toEqual({ changed: true });
    expect(await driver.apply(config(true), ctx)).toEqual({ changed: false });
    const baseline = await measure();

    expect(await driver.apply(config(false), ctx)).toEqual({ changed: true });
    expect((await rtr.exec(["nft", "list", "tables"])).stdout).not.toContain("tern_qos");
    const floodOff = flood(5000);
    const off = await measure();
    await floodOff;

    await driver.apply(config(true), ctx);
    const mgmtBefore = await classSent("1:10");
    const bulkBefore = await classSent("1:20");
    const floodOn = flood(5000);
    const on = await measure();
    await floodOn;
    const mgmt = (await classSent("1:10")) - mgmtBefore;
    const bulk = (await classSent("1:20")) - bulkBefore;

    console.log(
      `management QoS, 20 Mbit/s line, ~45 Mbit/s UDP flood from the router, probe every 100 ms (window 20):\n` +
        `  baseline (no load):   rtt ${baseline.rtt.toFixed(2)} ms, loss ${baseline.loss} %\n` +
        `  flood, QoS off:       rtt ${off.rtt.toFixed(2)} ms, loss ${off.loss} %\n` +
        `  flood, QoS on:        rtt ${on.rtt.toFixed(2)} ms, loss ${on.loss} %\n` +
        `  HTB during the QoS-on flood: management class 1:10 sent ${mgmt} packets, bulk class 1:20 sent ${bulk}`,
    );
    // Correctness: probes went to the management class, the flood to the default class.
    expect(mgmt).toBeGreaterThanOrEqual(30);
    expect(mgmt).toBeLessThan(200);
    expect(bulk).toBeGreaterThan(1000);
    expect(on.loss).toBe(0);
    // Generous ordering: a 500 KB queue at 20 Mbit/s adds up to 200 ms; QoS must avoid most of it.
    expect(off.rtt).toBeGreaterThan(on.rtt * 3 + 20);
  }, 60_000);

  it("removes its qdisc and table when QoS is turned off", async () => {
    await driver.apply(config(false), ctx);
    const q = (await rtr.exec(["tc", "-j", "qdisc", "show", "dev", "wan0"])).stdout;
    expect(q).not.toContain('"htb"');
    expect((await rtr.exec(["nft", "list", "tables"])).stdout).not.toContain("tern_qos");
  });
});
