/** Ping and traceroute from the router, for the server's troubleshooting requests and the local page. */

import type { PingParams, PingResult } from "@tern/protocol";
import type * as z from "zod";
import type { Runner } from "../runner.ts";

export type PingInput = z.input<typeof PingParams>;
export type PingOutput = z.infer<typeof PingResult>;

/** Parses `ping -q` output: "N packets transmitted, M received, X% packet loss" and "rtt min/avg/max/mdev = …". */
export function parsePing(output: string): Omit<PingOutput, "output"> {
  const counts =
    /(\d+) packets transmitted, (\d+) (?:packets )?received(?:, \+\d+ duplicates)?(?:, \+\d+ errors)?, ([\d.]+)% packet loss/.exec(
      output,
    );
  const rtt = /= ([\d.]+)\/([\d.]+)\/([\d.]+)\/([\d.]+) ms/.exec(output);
  return {
    transmitted: counts ? Number(counts[1]) : 0,
    received: counts ? Number(counts[2]) : 0,
    lossPercent: counts ? Number(counts[3]) : 100,
    rttAvgMs: rtt ? Number(rtt[2]) : null,
  };
}

export async function ping(
  runner: Runner,
  params: { target: string; count: number; source?: string | undefined },
): Promise<PingOutput> {
  const argv = [
    "ping",
    "-q",
    "-n",
    "-c",
    String(params.count),
    "-i",
    "0.2",
    "-W",
    "1",
    ...(params.source ? ["-I", params.source] : []),
    params.target,
  ];
  // Exit 1 = some or all replies missing: a result, not an error.
  const r = await runner.run(argv, { allowFailure: true, timeoutMs: (params.count + 5) * 1000 });
  if (r.exitCode > 1) throw new Error(`${argv.join(" ")}: exit ${r.exitCode}: ${r.stderr.trim() || r.stdout.trim()}`);
  return { ...parsePing(r.stdout), output: r.stdout + r.stderr };
}

export async function traceroute(runner: Runner, params: { target: string }): Promise<{ output: string }> {
  const argv = ["traceroute", "-n", "-q", "1", "-w", "1", "-m", "20", params.target];
  const r = await runner.run(argv, { allowFailure: true, timeoutMs: 60_000 });
  return { output: r.stdout + (r.exitCode === 0 ? "" : r.stderr) };
}
