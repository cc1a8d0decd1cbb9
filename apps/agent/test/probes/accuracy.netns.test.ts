/**
 * Loss accuracy at 1 %, 5 % and 20 % applied loss, three tunnels measured in
 * parallel (issue 17), in throw-away namespaces:
 *
 *   a (lo 10.210.0.{1,3,5}) tun0 ──veth── tun0 (lo 10.210.0.{2,4,6}) b
 *
 * Each tunnel is a loopback pair routed over the link as the IKEv2 driver
 * routes tunnel loopbacks; b's kernel answers the probes, and nft in b drops
 * the echo requests to each far loopback with probability 1, 5 and 20 %
 * (numgen, like the lab's emulated impairment), counting what it dropped.
 *
 * Stated tolerances: the agent's lost count equals the kernel's drop counter
 * (the estimator adds no error of its own), and its loss over the probes the
 * drop rule judged is within 5σ of the applied loss, σ being the sampling
 * error of a binomial estimate, √(p(1−p)/N): at 16,000 probes 0.39, 0.86 and
 * 1.58 points at 1, 5 and 20 %. The loss was taken over every probe sent,
 * those sent after the drops stopped included (about 300 in the wait for the
 * last answers, more on a busy machine): it read 0.4 point low at 20 % here,
 * and 1.36 points off in a CI run, failing the ±1 point then asserted.
 * Probes go every 5 ms here (the agent's default is
 * 200 ms; the accuracy of one probe does not depend on the rate), 16,000 per
 * tunnel in about 80 s; in production the same N takes the 5 probes a second
 * of the default 48 minutes, and a one-minute window of 300 probes has σ of
 * 0.6, 1.3 and 2.3 points at 1, 5 and 20 %.
 */
import { Netns, NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LinkQuality } from "../../src/probes/index.ts";
import { labConfig, tunnel } from "../support/configs.ts";
import { NsAgent } from "../support/ns-agent-client.ts";

const enabled = privilegedTestsEnabled("probe accuracy netns test", ["nft", "fping"]);
type Report = { details: (LinkQuality & { answered: number; lost: number })[] };

const LEVELS = [
  { id: "t1", loss: 1, local: "10.210.0.1", remote: "10.210.0.2" },
  { id: "t5", loss: 5, local: "10.210.0.3", remote: "10.210.0.4" },
  { id: "t20", loss: 20, local: "10.210.0.5", remote: "10.210.0.6" },
];
const PROBES = 16_000;

describe.runIf(enabled)("loss accuracy at 1, 5 and 20 %", () => {
  const scope = new NetnsScope("probeacc");
  let a: Netns;
  let b: Netns;
  let agent: NsAgent | null = null;

  beforeAll(async () => {
    a = await scope.netns("a");
    b = await scope.netns("b");
    await scope.veth(a, "tun0", b, "tun0");
    await a.addAddress("tun0", "10.100.0.4/31");
    await b.addAddress("tun0", "10.100.0.5/31");
    for (const l of LEVELS) {
      await a.addAddress("lo", `${l.local}/32`);
      await b.addAddress("lo", `${l.remote}/32`);
      await a.exec(["ip", "route", "add", `${l.remote}/32`, "dev", "tun0", "src", l.local]);
      await b.exec(["ip", "route", "add", `${l.local}/32`, "dev", "tun0", "src", l.remote]);
    }
    agent = new NsAgent(a.name);
  }, 30_000);

  afterAll(async () => {
    await agent?.stop();
    await scope.cleanup();
  });

  it("measures each level within 5σ of sampling over 16,000 probes, losing exactly what the kernel dropped", async () => {
    const rules = LEVELS.map(
      (l) =>
        `iifname "tun0" ip daddr ${l.remote} icmp type echo-request counter name "${l.id}_seen"\n` +
        `iifname "tun0" ip daddr ${l.remote} icmp type echo-request numgen random mod 10000 < ${l.loss * 100} counter name "${l.id}" drop`,
    );
    await b.exec(["nft", "-f", "-"], {
      input: `table inet impair {
        ${LEVELS.map((l) => `counter ${l.id} {}\ncounter ${l.id}_seen {}`).join("\n")}
        chain in {
          type filter hook input priority 0; policy accept;
          ${rules.join("\n")}
        }
      }`,
    });
    const config = labConfig((c) => {
      c.monitoring = { probeIntervalMs: 5, windowSize: 600, downAfterMs: 5000, statusIntervalMs: 5000 };
      c.tunnels = LEVELS.map((l) => tunnel({ id: l.id, localLoopback: l.local, remoteLoopback: l.remote }));
    });
    const started = Date.now();
    await agent!.call("configure", { config });
    await Netns.waitFor(
      `${PROBES} finalised probes per tunnel`,
      async () => {
        const r = await agent!.call<Report>("report");
        return r.details.length === 3 && r.details.every((d) => d.answered + d.lost >= PROBES);
      },
      300_000,
      1000,
    );
    // Stop the drops, then let every probe in flight come back or time out (1 s).
    await b.exec(["nft", "flush", "chain", "inet", "impair", "in"]);
    await new Promise((r) => setTimeout(r, 1500));
    const r = await agent!.call<Report>("report");
    const counters = JSON.parse((await b.exec(["nft", "-j", "list", "counters", "table", "inet", "impair"])).stdout).nftables as {
      counter?: { name: string; packets: number };
    }[];
    const counter = (name: string) => counters.find((c) => c.counter?.name === name)!.counter!.packets;
    const levels = LEVELS.map((l) => {
      const d = r.details.find((x) => x.key === `tunnel:${l.id}`)!;
      const sent = d.answered + d.lost;
      const dropped = counter(l.id);
      // The probes the drop rule judged: not those sent after it was flushed (about 300 in the 1.5 s wait, more
      // on a busy machine), which would pull the loss below the applied one.
      const seen = counter(`${l.id}_seen`);
      const measured = (d.lost / seen) * 100;
      const line =
        `${l.loss} %: ${sent} probes, ${seen} while dropping, ${d.lost} lost (${measured.toFixed(2)} % of those), ` +
        `kernel dropped ${dropped}; last window of ${d.samples}: ${d.lossPercent} %`;
      return { l, d, seen, dropped, measured, line };
    });
    // Printed before the checks, so that a failed run shows every level's figures.
    console.log(
      `loss accuracy, three tunnels in parallel, ${((Date.now() - started) / 1000).toFixed(0)} s:\n  ${levels.map((v) => v.line).join("\n  ")}`,
    );
    for (const { l, d, seen, dropped, measured, line } of levels) {
      expect(d.lost, line).toBe(dropped);
      const sigma = Math.sqrt(((l.loss / 100) * (1 - l.loss / 100)) / seen) * 100;
      expect(Math.abs(measured - l.loss), line).toBeLessThanOrEqual(5 * sigma);
    }
  }, 360_000);
});
