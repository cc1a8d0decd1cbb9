/**
 * Management QoS under a bulk flood, on a real kernel:
 *
 *   rtr (agent, 10.1.0.2) wan0 ── eth0 modem eth1 ── srv (10.9.0.2, probe responder)
 *                                       tbf 10 Mbit/s, 250 KB queue
 *
 * The modem is the line: its queue is where bufferbloat happens when the
 * router sends faster than 10 Mbit/s. With QoS on, the router shapes to 95 %
 * of the line (bandwidthMbps.tx 10), so the queue forms in its own HTB,
 * where probes are served first. The figures are printed; the assertions
 * are on correctness (classification) plus a generous ordering.
 */
import { Netns, NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import type { DeviceConfig, TunnelReport } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QosDriver } from "../../../src/drivers/qos/index.ts";
import { labConfig, tunnel, wan } from "../../support/configs.ts";
import { type DisposableContext, testContext } from "../../support/context.ts";
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
  let ctx: DisposableContext;
  const driver = new QosDriver();
  const monitoring = { probeIntervalMs: 100, windowSize: 20, downAfterMs: 5000, statusIntervalMs: 5000 };
  const config = (qos: boolean): DeviceConfig =>
    labConfig((c) => {
      c.monitoring = monitoring;
      c.qos = { prioritizeManagement: qos };
      c.interfaces = [{ ...wan("wan0", "10.1.0.2/24", "10.1.0.1"), bandwidthMbps: { tx: 10, rx: 10 } }];
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
    await modem.exec(["tc", "qdisc", "add", "dev", "eth1", "root", "tbf", "rate", "10mbit", "burst", "20kb", "limit", "250kb"]);
    ctx = await testContext(new NetnsRunner(rtr.name), { controlServer: { address: "10.9.0.2", port: 8443 } });
    responder = new NsAgent(srv.name);
    await responder.call("configure", {
      config: labConfig((c) => {
        c.monitoring = monitoring;
        c.tunnels = [tunnel({ id: "t1", localLoopback: "10.9.0.2", remoteLoopback: "10.1.0.2", probeTargets: [] })];
      }),
    });
    // The "management server": a TCP echo on 10.9.0.2:8443, the control link's stand-in.
    scope.spawn(srv, [
      process.execPath,
      "-e",
      `require("net").createServer((s)=>{s.setNoDelay(true);s.pipe(s)}).listen(8443,"10.9.0.2")`,
    ]);
    await Netns.waitFor("echo server", async () => (await srv.exec(["ss", "-ltn", "sport = :8443"])).stdout.includes("8443"));
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

  /** Mean RTT of 8-byte request/echo exchanges every 100 ms over one TCP connection to the server, for `ms`. */
  async function controlRtt(ms: number): Promise<number> {
    const out = await rtr.exec(
      [
        process.execPath,
        "-e",
        // Echoes come back in order: match each 8 bytes to the oldest outstanding send time.
        `const s=require("net").connect(8443,"10.9.0.2");s.setNoDelay(true);const r=[];const q=[];let got=0;` +
          `s.on("data",(d)=>{got+=d.length;while(got>=8){got-=8;r.push(Number(process.hrtime.bigint()-q.shift())/1e6)}});` +
          `s.on("connect",()=>{const t=setInterval(()=>{q.push(process.hrtime.bigint());s.write("12345678")},100);` +
          `setTimeout(()=>{clearInterval(t);const w=r.slice(5);console.log(JSON.stringify(w.reduce((a,b)=>a+b,0)/w.length));s.destroy()},${ms})})`,
      ],
      { timeoutMs: ms + 10_000 },
    );
    return JSON.parse(out.stdout) as number;
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
    const [baseline, baseTcp] = await Promise.all([measure(), controlRtt(3000)]);

    expect(await driver.apply(config(false), ctx)).toEqual({ changed: true });
    expect((await rtr.exec(["nft", "list", "tables"])).stdout).not.toContain("tern_qos");
    const floodOff = flood(5000);
    const [off, offTcp] = await Promise.all([measure(), controlRtt(3500)]);
    await floodOff;

    await driver.apply(config(true), ctx);
    const mgmtBefore = await classSent("1:10");
    const bulkBefore = await classSent("1:20");
    const floodOn = flood(5000);
    const [on, onTcp] = await Promise.all([measure(), controlRtt(3500)]);
    await floodOn;
    const mgmt = (await classSent("1:10")) - mgmtBefore;
    const bulk = (await classSent("1:20")) - bulkBefore;

    console.log(
      `management QoS, 10 Mbit/s line, ~45 Mbit/s UDP flood from the router, probe every 100 ms (window 20):\n` +
        `  baseline (no load):   probe rtt ${baseline.rtt.toFixed(2)} ms, loss ${baseline.loss} %; control-link TCP echo ${baseTcp.toFixed(2)} ms\n` +
        `  flood, QoS off:       probe rtt ${off.rtt.toFixed(2)} ms, loss ${off.loss} %; control-link TCP echo ${offTcp.toFixed(2)} ms\n` +
        `  flood, QoS on:        probe rtt ${on.rtt.toFixed(2)} ms, loss ${on.loss} %; control-link TCP echo ${onTcp.toFixed(2)} ms\n` +
        `  HTB during the QoS-on flood: management class 1:10 sent ${mgmt} packets, bulk class 1:20 sent ${bulk}`,
    );
    // Correctness: probes went to the management class, the flood to the default class.
    // Probes (10/s) plus the control link's segments and ACKs (10/s each way) for ~3.5 s.
    expect(mgmt).toBeGreaterThanOrEqual(50);
    expect(mgmt).toBeLessThan(400);
    expect(bulk).toBeGreaterThan(1000);
    expect(on.loss).toBe(0);
    // Generous ordering: a 250 KB queue at 10 Mbit/s adds up to 200 ms; QoS must avoid most of it.
    expect(off.rtt).toBeGreaterThan(on.rtt * 3 + 20);
    expect(offTcp).toBeGreaterThan(onTcp * 3 + 20);
  }, 60_000);

  it("removes its qdisc and table when QoS is turned off", async () => {
    await driver.apply(config(false), ctx);
    const q = (await rtr.exec(["tc", "-j", "qdisc", "show", "dev", "wan0"])).stdout;
    expect(q).not.toContain('"htb"');
    expect((await rtr.exec(["nft", "list", "tables"])).stdout).not.toContain("tern_qos");
  });
});
