/** Parsing ping's summary; the commands themselves run in diagnostics/ (ping.ts, traceroute.ts). */

import type { PingResult } from "@tern/protocol";
import type * as z from "zod";

export type PingOutput = z.infer<typeof PingResult>;

/** Parses `ping -q` output: "N packets transmitted, M received, X% packet loss" and "rtt min/avg/max/mdev = …". */
export function parsePing(output: string): Pick<PingOutput, "transmitted" | "received" | "lossPercent" | "rttAvgMs"> {
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
