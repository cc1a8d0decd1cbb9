/**
 * Scenarios 1, 2, 3, 5 and 6 of issue 7 on the two-site lab
 * (topologies/two-sites.yaml): onboarding, an IKEv2 tunnel between the sites,
 * WAN impairment with notifications and a webhook, LAN 1:1 NAT, DHCP. The lab
 * is shared; each scenario makes the API changes it needs and undoes them.
 *
 * Stated tolerances of scenario 3 (also in docs/agent-network.md): the lab's
 * server tells each end to probe the tunnel with ICMP echo to the far tunnel
 * loopback 10 times a second and report loss, RTT and jitter over its last 300
 * probes (30 s; `PROBES` below: the production default of 5 a second would
 * take this scenario 9 minutes for the same count). After 35 s for the
 * windows to hold impaired probes only, reports are sampled until windows
 * that do not overlap hold 3,378 probes (`probesForLoss(5, 1.5)`).
 * - loss 5 %: within ±1.5 points over those probes. Loss is a binomial
 *   estimate: σ = √(p(1−p)/N) ≈ 0.37 points for N = 3,378, so ±1.5 points is
 *   4σ (one run in about 16,000 outside by chance).
 * - RTT: site-a's reported RTT within ±2 ms of the mean of `fping` run
 *   meanwhile from site-a's tunnel loopback to site-b's, through the same
 *   tunnel (300 probes), and 30 ± 3 ms above the clean path's RTT. One run at
 *   the production cadence: loss 4.72 % over 1783 distinct probes, RTT
 *   34.06 ms against fping's 33.82 ms, 32.55 ms above a clean 1.54 ms (the
 *   emulated delay itself added 32.3 ms as fping saw it, on a host at load 14).
 * Scenario 7 (issue 18, fwdump) asks site-b's agent for a dump through the
 * API and downloads the archive the agent uploaded over its websocket.
 * Scenario 3b kills site-a's agent: IPsec (charon) lives on, so site-b's
 * probes, answered by site-a's kernel, keep the tunnel up; the server shows
 * it N/A and raises one "device connection", no tunnel-down.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { privilegedTestsEnabled } from "@tern/netlab";
import { DeviceDump, RegistrationToken, TokenPair, Tunnel } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { agentStateDir } from "../../src/lab/control/agents.ts";
import { plannedInterfaces } from "../../src/lab/control/index.ts";
import { fpingSamples, ping } from "../helpers.ts";
import { obtainLease } from "./support/dhclient.ts";
import { ensureTunnel, ikeSas, rekeyChild } from "./support/ikev2.ts";
import { notificationsAbout, useWebhook } from "./support/notifications.ts";
import { disjointLoss, distinctProbes, probesForLoss, reportsOf, sampleQuality, summarize } from "./support/quality.ts";
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
import { capture } from "./support/tcpdump.ts";
import { WebhookReceiver } from "./support/webhook-receiver.ts";

const enabled = privilegedTestsEnabled("scenarios: two sites", SCENARIO_COMMANDS);

/**
 * The probing the lab's server gives every config (TERN_PROBE_*, docs/server.md): twice the default rate,
 * so windows of the default 300 probes span 30 s. Fewer probes would not do: with 200, a clean window's
 * Wilson upper bound (1.9 %) never falls below the 2 % warning less 10 %, and the drop-rate alert never resolves.
 */
const PROBES = { intervalMs: 100, window: 300 };
const WINDOW_MS = PROBES.intervalMs * PROBES.window;

describe.runIf(enabled)("two sites (scenarios 1, 2, 3, 5, 6)", () => {
  let s: ScenarioLab;
  beforeAll(async () => {
    s = await upScenarioLab("two-sites.yaml", {
      serverEnv: { TERN_PROBE_INTERVAL_MS: String(PROBES.intervalMs), TERN_PROBE_WINDOW: String(PROBES.window) },
    });
  });
  afterAll(async () => {
    if (!s) return;
    const left = await s.down();
    expect(left).toEqual({ namespaces: [], processes: [] });
  });

  it("1. onboard: registration token → agents register → approval → devices connected, jobs complete", async () => {
    const tokens = await s.api.get("/api/tokens", z.array(RegistrationToken));
    expect(tokens.map((t) => [t.name, t.uses])).toEqual([["lab two-sites", 2]]);
    for (const edge of ["site-a", "site-b"]) {
      const d = await s.device(edge);
      expect(d).toMatchObject({ name: edge, hostname: edge, isApproved: true, connection: "connected", isConnected: true });
      expect(d.machineId).toBe(`tern-lab-${s.lab.store.state.id}-${edge}`);
      expect(d.versions.agent).toMatch(/^\d+\.\d+\.\d+/);
      expect(d.desiredHash).toMatch(/^[0-9a-f]{64}$/);
      expect(d.appliedHash).toBe(d.desiredHash);
      const assigned = d.interfaces
        .filter((i) => i.isAssigned)
        .map((i) => [i.name, i.type, `${i.IPv4}/${i.IPv4Mask}`, i.gateway]);
      expect(assigned).toEqual(
        plannedInterfaces(s.lab.plan, edge).map((p) => [p.name, p.type, `${p.IPv4}/${p.IPv4Mask}`, p.gateway]),
      );
      // The approval's configuration really reached the router: the agent put the planned address and default route there.
      const routes = await s.sh(edge, ["ip", "-j", "route", "show", "default"]);
      expect(JSON.parse(routes.stdout)).toContainEqual(
        expect.objectContaining({ gateway: plannedInterfaces(s.lab.plan, edge)[0]!.gateway, dev: "wan0", protocol: "57" }),
      );
    }
    const jobs = await s.api.get(
      "/api/jobs",
      z.array(z.object({ type: z.string(), state: z.string(), device: z.object({ name: z.string() }) })),
    );
    for (const edge of ["site-a", "site-b"])
      expect(jobs.filter((j) => j.device.name === edge && j.type === "modify").map((j) => j.state)).toEqual(["complete"]);
    // The hosts reach their router at the address Tern gave it.
    expect((await ping(s.ns("lan-a-h1"), "192.168.10.1", 3, 0.2)).received).toBe(3);
  });

  it("2. tunnel between the sites: IKEv2 with PFS, LAN to LAN traffic, Connected with loss, RTT and jitter in the API", async () => {
    const t0 = performance.now();
    const tunnel = await ensureTunnel(s, "site-a", "site-b");
    const list = await s.api.get("/api/tunnels", z.array(Tunnel));
    expect(list.map((t) => [t.deviceA.name, t.interfaceA.name, t.deviceB?.name, t.interfaceB?.name, t.peer])).toEqual([
      ["site-a", "wan0", "site-b", "wan0", null],
    ]);
    expect(tunnel.loopbackA).toMatch(/^10\.100\.\d+\.\d+$/);

    // The IKE SA comes up on both routers (negotiated after the jobs complete: retransmits on a busy
    // host take seconds), and a rekeyed CHILD_SA carries a DH group: PFS.
    for (const edge of ["site-a", "site-b"])
      await waitFor(30_000, async () => {
        const sas = await ikeSas(s, edge);
        return /ESTABLISHED/.test(sas) ? true : `${edge}: ${sas}`;
      });
    const rekeyed = await rekeyChild(s, "site-a");
    expect(rekeyed).toMatch(/INSTALLED, TUNNEL(-in-UDP)?, ESP:AES_CBC-256\/HMAC_SHA2_256_128\/MODP_2048/);

    // LAN to LAN, both ways, through the tunnel (userspace ESP, so UDP-encapsulated on the WAN).
    await waitForPing(s, "lan-a-h1", "192.168.20.10");
    const ab = await ping(s.ns("lan-a-h1"), "192.168.20.10", 20, 0.05);
    const ba = await ping(s.ns("lan-b-h1"), "192.168.10.10", 20, 0.05);
    expect([ab.received, ba.received]).toEqual([20, 20]);
    const esp = await capture(s, "site-a", "wan0", "udp port 4500 or esp", async () => {
      await ping(s.ns("lan-a-h1"), "192.168.20.10", 5, 0.05);
    });
    expect(esp.packets).toBeGreaterThanOrEqual(5);
    console.log(`scenario 2: tunnel created → LAN to LAN traffic in ${((performance.now() - t0) / 1000).toFixed(1)}s`);

    // What the admin sees: the tunnel Connected, and each end's quality.
    const live = new LiveChecks();
    const connected = await live.wait("tunnelStatus Connected with quality from both ends", 60_000, async () => {
      const t = await getTunnel(s.api, tunnel.id);
      return t.tunnelStatus === "Connected" && t.status === "Connected" && t.quality.a && t.quality.b
        ? true
        : `tunnelStatus ${t.tunnelStatus}, status ${t.status}, A ${t.tunnelStatusA}, B ${t.tunnelStatusB}, quality ${JSON.stringify(t.quality)}`;
    });
    const t = await getTunnel(s.api, tunnel.id);
    if (connected) expect([t.tunnelStatusA, t.tunnelStatusB, t.isPending]).toEqual(["up", "up", false]);
    for (const q of reportsOf(t)) {
      // 10 ± 1 ms toward each site: 20 ms round trip, plus userspace ESP and the agents' own scheduling.
      expect(q.up).toBe(true);
      expect(q.loss).toBeLessThanOrEqual(10);
      expect(q.rtt).toBeGreaterThan(18);
      expect(q.rtt).toBeLessThan(45);
      expect(q.jitter).toBeGreaterThanOrEqual(0);
    }
    console.log(`scenario 2: quality in the API ${JSON.stringify(t.quality)}`);
    live.assertAll();
  });

  it("3. WAN impairment 5 % / 30 ms: reported loss and RTT follow; RTT and drop-rate notifications raised, resolved, sent to a webhook", async () => {
    const tunnel = await ensureTunnel(s, "site-a", "site-b");
    const hook = new WebhookReceiver();
    await hook.start();
    const target = { tunnelId: tunnel.id };
    const EVENTS = ["tunnel-rtt", "tunnel-drop-rate"] as const;
    try {
      await useWebhook(s.api, hook);
      expect(hook.matching("test")).toHaveLength(1);

      // A clean path first (the topology delays 10 ± 1 ms each way): the RTT Tern adds on its own.
      await s.lab.impair("inet", {}, { clear: true });
      const live = new LiveChecks();
      const reported = await live.wait("tunnel quality of a clean path in GET /tunnels/{id}", 90_000, async () => {
        const r = reportsOf(await getTunnel(s.api, tunnel.id));
        return r.length === 2 && r.every((q) => q.rtt < 15 && q.loss < 10) ? true : `quality ${JSON.stringify(r)}`;
      });
      // Without reported quality there is nothing to measure: the scenario ends here, naming what it waits for.
      if (!reported) live.assertAll();
      // A report's RTT is the mean over the probe window (`PROBES`): let it fill with clean probes only, as
      // for the impaired reading below (the first report under 15 ms still averages in delayed ones: a clean
      // RTT of 7 ms where the path gives 2 put the impaired reading 5.1 ms "off").
      await new Promise((r) => setTimeout(r, WINDOW_MS + 2_000));
      const clean = summarize(await sampleQuality(s.api, tunnel.id, 15_000));

      // The admin's thresholds for this tunnel: RTT over 20 ms and any loss over 2 % warn.
      await s.api.put("/api/notificationsConf", z.unknown(), {
        rules: Object.fromEntries(EVENTS.map((e) => [e, { enabled: true, sendWebHook: true, resolvedAlert: true }])),
      });
      await s.api.put("/api/tunnels/notifications", z.unknown(), {
        ids: [tunnel.id],
        notifications: { rtt: { warning: 20, critical: 500 }, dropRate: { warning: 2, critical: 50 } },
      });
      const impairedAt = new Date();
      await s.lab.impair("inet:site-b", { lossPercent: 5, delayMs: 30 });
      await new Promise((r) => setTimeout(r, WINDOW_MS + 5_000));
      // Loss within ±1.5 points needs enough probes to say so (issue 17): 4 standard errors of the
      // binomial at 5 % is 3,378 probes, counted in windows that do not overlap (six a side).
      const needed = probesForLoss(5, 1.5);
      // fping through the same tunnel (tunnel loopback to tunnel loopback) during the first minute of sampling.
      const [reports, fpingRtts] = await Promise.all([
        sampleQuality(s.api, tunnel.id, 30_000, { until: (r) => disjointLoss(r).probes >= needed, maxMs: 300_000 }),
        fpingSamples(s.ns("site-a"), tunnel.loopbackB, 300, 200, ["-S", tunnel.loopbackA]),
      ]);
      const impaired = summarize(reports);
      const probes = distinctProbes(reports);
      const loss = disjointLoss(reports);
      const fpingMean = fpingRtts.reduce((a, b) => a + b, 0) / fpingRtts.length;
      const reportedA = summarize(reports.filter((r) => r.side === "a"));
      console.log(
        `scenario 3: clean path rtt ${clean.rtt.toFixed(2)} ms (${clean.reports} reports); impaired (5 %, 30 ms toward site-b): ` +
          `loss ${loss.loss.toFixed(2)} % (${loss.lost} of ${loss.probes} probes in ${loss.windows} windows that do not overlap; ` +
          `mean of the reports ${impaired.loss.toFixed(2)} %), rtt ${impaired.rtt.toFixed(2)} ms, jitter ${impaired.jitter.toFixed(2)} ms over ` +
          `${impaired.reports} reports covering ${probes} distinct probes; site-a reported rtt ${reportedA.rtt.toFixed(2)} ms, ` +
          `fping through the tunnel ${fpingMean.toFixed(2)} ms (${fpingRtts.length} of 300 answered)`,
      );
      expect(loss.probes).toBeGreaterThanOrEqual(needed);
      expect(Math.abs(loss.loss - 5)).toBeLessThanOrEqual(1.5);
      // Tern against the ground truth of the same path (issue 17: within 2 ms of fping through the tunnel) …
      expect(Math.abs(reportedA.rtt - fpingMean)).toBeLessThanOrEqual(2);
      // … and against the applied delay, which includes the lab emulator's own error (fping sees it too).
      expect(Math.abs(impaired.rtt - (clean.rtt + 30))).toBeLessThanOrEqual(3);

      await live.wait("RTT and drop-rate notifications raised", 60_000, async () => {
        const raised = (await notificationsAbout(s.api, target, [...EVENTS])).filter((n) => new Date(n.createdAt) >= impairedAt);
        const types = new Set(raised.map((n) => n.eventType));
        return EVENTS.every((e) => types.has(e)) ? true : `raised so far: ${[...types].join(", ") || "none"}`;
      });
      await s.lab.impair("inet:site-b", { lossPercent: 0, delayMs: 0 });
      await live.wait("notifications resolved once the impairment is gone", 120_000, async () => {
        const open = (await notificationsAbout(s.api, target, [...EVENTS])).filter((n) => !n.resolved);
        return open.length === 0 ? true : `still open: ${open.map((n) => `${n.eventType} (${n.details})`).join("; ")}`;
      });
      await live.wait("webhook deliveries of the raised and resolved notifications", 30_000, async () => {
        const missing = EVENTS.flatMap((e) =>
          (["notification.raised", "notification.resolved"] as const)
            .filter((ev) => hook.matching(ev, e).length === 0)
            .map((ev) => `${ev} ${e}`),
        );
        return missing.length === 0 ? true : `not received: ${missing.join(", ")}`;
      });
      expect(hook.deliveries.filter((d) => !d.verified).map((d) => d.reason)).toEqual([]);
      live.assertAll();
    } finally {
      await hook.stop();
      await s.api.put("/api/tunnels/notifications", z.unknown(), {
        ids: [tunnel.id],
        notifications: { rtt: null, dropRate: null },
      });
      // Back to the topology's own impairment for the scenarios that follow.
      const plan = s.lab.plan.attachments.filter((a) => a.cloud === "inet");
      for (const a of plan) await s.lab.impair(a.id, a.impairment, { clear: true });
    }
    // Up to five minutes of impaired sampling (the probes for ±1.5 points; about three) and the waits around it.
  }, 600_000);

  it("3b. agent of site-a killed: IPsec still carries traffic, site-b reports the tunnel up; N/A and one device-connection notification, no tunnel-down", async () => {
    const tunnel = await ensureTunnel(s, "site-a", "site-b");
    const siteA = s.deviceId("site-a");
    const siteB = s.deviceId("site-b");
    await waitFor(90_000, async () => {
      const t = await getTunnel(s.api, tunnel.id);
      return t.status === "Connected" ? true : `tunnel ${t.status}`;
    });
    // A short grace period so the device-connection notification comes within the scenario.
    const rule = { severity: "critical", immediateEmail: true, sendWebHook: true, resolvedAlert: true };
    await s.api.put("/api/notificationsConf", z.unknown(), { rules: { "device-connection": { ...rule, warningThreshold: 5 } } });
    const killedAt = new Date();
    try {
      await s.control.stopAgent("site-a", "kill");
      // Longer than site-b's down time (15 s) plus the confirmation of three reports (15 s).
      await new Promise((r) => setTimeout(r, 40_000));
      const t = await getTunnel(s.api, tunnel.id);
      expect(t.status).toBe("N/A");
      // site-b's end: fresh reports, up, its probes answered by site-a's kernel through the tunnel.
      expect(t.quality.b).toMatchObject({ up: true });
      expect(Date.parse(t.quality.b!.at)).toBeGreaterThan(killedAt.getTime() + 30_000);
      expect((await ping(s.ns("lan-b-h1"), "192.168.10.10", 10, 0.1)).received).toBe(10);
      const since = (n: { createdAt: string }) => Date.parse(n.createdAt) >= killedAt.getTime();
      const tunnelDown = (await notificationsAbout(s.api, { tunnelId: tunnel.id }, ["tunnel-connection"])).filter(since);
      expect(tunnelDown).toEqual([]);
      const connection = (await notificationsAbout(s.api, { deviceId: siteA }, ["device-connection"])).filter(since);
      expect(connection.map((n) => [n.eventType, n.count, n.resolved])).toEqual([["device-connection", 1, false]]);
      expect((await notificationsAbout(s.api, { deviceId: siteB }, ["device-connection"])).filter(since)).toEqual([]);
      console.log(`scenario 3b: site-a's agent killed; 40 s later site-b reports the tunnel up (${JSON.stringify(t.quality.b)})`);
    } finally {
      await s.control.startAgent("site-a");
      await s.api.put("/api/notificationsConf", z.unknown(), {
        rules: { "device-connection": { ...rule, warningThreshold: 60 } },
      });
    }
    // Back: the tunnel's state comes from site-a's fresh reports.
    const restartedAt = Date.now();
    await waitFor(90_000, async () => {
      const t = await getTunnel(s.api, tunnel.id);
      return t.status === "Connected" && t.quality.a && Date.parse(t.quality.a.at) > restartedAt ? true : `tunnel ${t.status}`;
    });
  });

  it("5. LAN 1:1 NAT: the far site sees the translated address, and inbound to it reaches the host", async () => {
    await ensureTunnel(s, "site-a", "site-b");
    const lan = await s.iface("site-a", "lan0");
    const rule = { direction: "lanNat", interface: lan.devId, source: "192.168.10.0/24", translated: "172.16.10.0/24" };
    const set = await s.api.call("PUT", `/api/devices/${s.deviceId("site-a")}`, JobsQueued.partial(), {
      body: { firewall: { rules: [rule] } },
    });
    expect(set.status).toBe(202);
    await jobsComplete(s.api, set.data.jobIds ?? []);
    // Both ends were reconfigured: the far end's tunnel now routes the translated prefix.
    expect(set.data.jobIds).toHaveLength(2);
    try {
      // New traffic selectors: the CHILD_SA is negotiated again after the apply.
      await waitForPing(s, "lan-a-h1", "192.168.20.10");
      // Outbound: host A (192.168.10.10) as 172.16.10.10 on site B's LAN.
      const out = await capture(s, "lan-b-h1", "eth0", "icmp and src 172.16.10.10 and dst 192.168.20.10", async () => {
        expect((await ping(s.ns("lan-a-h1"), "192.168.20.10", 5, 0.1)).received).toBe(5);
      });
      expect(out.packets).toBeGreaterThanOrEqual(5);
      // Inbound: B reaches host A at its translated address; host A sees B's own address.
      const inb = await capture(s, "lan-a-h1", "eth0", "icmp and src 192.168.20.10 and dst 192.168.10.10", async () => {
        expect((await ping(s.ns("lan-b-h1"), "172.16.10.10", 5, 0.1)).received).toBe(5);
      });
      expect(inb.packets).toBeGreaterThanOrEqual(5);
      // The untranslated address is not routed to site A any more.
      expect((await ping(s.ns("lan-b-h1"), "192.168.10.10", 2, 0.2)).received).toBe(0);
    } finally {
      const undo = await s.api.call("PUT", `/api/devices/${s.deviceId("site-a")}`, JobsQueued.partial(), {
        body: { firewall: { rules: [] } },
      });
      await jobsComplete(s.api, undo.data.jobIds ?? []);
    }
    await waitForPing(s, "lan-b-h1", "192.168.10.10");
  });

  it("6. DHCP: a lease in range with the default lease time, capped at the max, options received; serving on after a LAN address change", async () => {
    const lan = await s.iface("site-b", "lan0");
    const dhcp = {
      interface: lan.devId,
      rangeStart: "192.168.20.100",
      rangeEnd: "192.168.20.150",
      dns: ["192.168.20.1"],
      defaultLeaseTime: 600,
      maxLeaseTime: 1800,
      options: [
        { option: "domain-name", code: 15, value: "branch.tern.example" },
        { option: "ntp-servers", code: 42, value: "192.168.20.1" },
        { option: "tftp-server-name", code: 66, value: "tftp.branch.tern.example" },
      ],
    };
    const put = (body: unknown) => s.api.call("PUT", `/api/devices/${s.deviceId("site-b")}`, JobsQueued.partial(), { body });
    await jobsComplete(s.api, (await put({ dhcp: [dhcp] })).data.jobIds ?? []);
    const dir = join(s.lab.dir, "dhclient");
    const inRange = (a: string) =>
      Number(a.split(".")[3]) >= 100 && Number(a.split(".")[3]) <= 150 && a.startsWith("192.168.20.");
    try {
      const lease = await obtainLease(s, "lan-b-pc", join(dir, "default"));
      expect(inRange(lease.address)).toBe(true);
      expect(lease.leaseTime).toBe(600);
      expect(lease.routers).toBe("192.168.20.1");
      expect(lease.options).toMatchObject({
        domain_name: "branch.tern.example",
        domain_name_servers: "192.168.20.1",
        ntp_servers: "192.168.20.1",
        tftp_server_name: "tftp.branch.tern.example",
      });
      const greedy = await obtainLease(s, "lan-b-pc", join(dir, "greedy"), 86_400);
      expect(greedy.leaseTime).toBe(1800);

      // The LAN moves to .254: the agent moves the address, the DHCP server follows it.
      const move = await put({ interfaces: [{ ...lan, IPv4: "192.168.20.254" }] });
      await jobsComplete(s.api, move.data.jobIds ?? []);
      const addrs = await s.sh("site-b", ["ip", "-4", "-o", "addr", "show", "dev", "lan0"]);
      expect(addrs.stdout).toContain("192.168.20.254/24");
      expect(addrs.stdout).not.toContain("192.168.20.1/24");
      const after = await obtainLease(s, "lan-b-pc", join(dir, "moved"));
      expect(inRange(after.address)).toBe(true);
      expect(after.routers).toBe("192.168.20.254");
      expect(after.serverId).toBe("192.168.20.254");
      expect(after.leaseTime).toBe(600);
    } finally {
      await jobsComplete(s.api, (await put({ dhcp: [], interfaces: [{ ...lan, IPv4: "192.168.20.1" }] })).data.jobIds ?? []);
    }
    expect((await ping(s.ns("lan-b-h1"), "192.168.20.1", 3, 0.2)).received).toBe(3);
  });

  it("7. fwdump: a dump requested through the API is made by the router's agent, uploaded over its link and downloaded whole", async () => {
    const id = s.deviceId("site-b");
    const requested = await s.api.call("POST", `/api/devices/${id}/dump`, DeviceDump);
    expect(requested.status).toBe(202);
    let done: DeviceDump | undefined;
    await waitFor(90_000, async () => {
      done = (await s.api.get(`/api/devices/${id}/dumps`, z.array(DeviceDump))).find((d) => d.id === requested.data.id);
      return done && done.status !== "pending" ? true : `dump ${done?.status ?? "missing"}`;
    });
    expect(done).toMatchObject({ status: "complete", error: null });
    expect(done?.fileName).toMatch(/^tern-agent-dump-site-b-\d{8}T\d{6}Z\.tar\.gz$/);
    // The same bytes as the archive the agent left in its default dumps directory.
    const local = await readFile(join(agentStateDir(s.lab.dir, "site-b"), "dumps", done!.fileName!));
    const { admin, apiUrl } = s.control.plan;
    const login = await fetch(new URL("/api/users/login", apiUrl), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: admin.email, password: admin.password }),
    });
    const { accessToken } = TokenPair.parse(await login.json());
    const download = await fetch(new URL(`/api/devices/${id}/dumps/${done!.id}`, apiUrl), {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(done!.size);
    expect(bytes.equals(local)).toBe(true);
    // A real router dump: the IKEv2 driver's state and the system facts are in it, the PSK is not.
    const list = await s.sh("site-b", ["tar", "-tzf", join(agentStateDir(s.lab.dir, "site-b"), "dumps", done!.fileName!)]);
    expect(list.stdout).toContain("/README.txt");
    expect(list.stdout).toMatch(/\/drivers\/ikev2\//);
    expect(list.stdout).toContain("/system/links.txt");
  });
});
