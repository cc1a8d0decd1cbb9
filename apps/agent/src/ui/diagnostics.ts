/**
 * ping and traceroute through the command runner, for the troubleshooting
 * page and the control link's `ping`/`traceroute` requests. Targets must be
 * IPv4 literals (checked with the protocol schema): no names, no options.
 */
import { IPv4 } from "@tern/protocol";
import { ConfigError } from "../drivers/firewall/config-error.ts";
import type { Runner } from "../runner.ts";
import type { UiPingResult } from "./data-source.ts";

export function checkTarget(target: unknown): string {
  const r = IPv4.safeParse(target);
  if (!r.success) throw new ConfigError("target", "must be an IPv4 address");
  return r.data;
}

/** Parses `ping -q`-style summary lines of iputils ping. */
export function parsePing(output: string): Omit<UiPingResult, "output"> {
  const s = /(\d+) packets transmitted, (\d+) received(?:, \+\d+ duplicates)?(?:, \+\d+ errors)?, ([\d.]+)% packet loss/.exec(
    output,
  );
  const rtt = /rtt min\/avg\/max\/mdev = [\d.]+\/([\d.]+)\//.exec(output);
  return {
    transmitted: s ? Number(s[1]) : 0,
    received: s ? Number(s[2]) : 0,
    lossPercent: s ? Number(s[3]) : 100,
    rttAvgMs: rtt ? Number(rtt[1]) : null,
  };
}

export async function runPing(runner: Runner, target: string, count = 4, source?: string): Promise<UiPingResult> {
  const t = checkTarget(target);
  if (!Number.isInteger(count) || count < 1 || count > 20) throw new ConfigError("count", "must be 1 to 20");
  const argv = ["ping", "-n", "-c", String(count), "-i", "0.2", "-W", "2"];
  if (source) argv.push("-I", checkTarget(source));
  argv.push(t);
  const r = await runner.run(argv, { allowFailure: true, timeoutMs: 15_000 + count * 1000 });
  const output = `${r.stdout}${r.stderr}`;
  return { ...parsePing(output), output };
}

export async function runTraceroute(runner: Runner, target: string): Promise<{ output: string }> {
  const r = await runner.run(["traceroute", "-n", "-w", "1", "-q", "1", "-m", "20", checkTarget(target)], {
    allowFailure: true,
    timeoutMs: 40_000,
  });
  return { output: `${r.stdout}${r.stderr}` };
}
