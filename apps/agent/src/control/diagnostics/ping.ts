/**
 * `ping` from the router (iputils-ping, in the agent's Debian dependencies):
 * one line per reply (and, with -O, per probe still unanswered) as it comes,
 * then the parsed statistics. Exit 1 (replies missing) is a result, not an error.
 */
import { IpAddress, type PingParams, type PingResult, pingTimeLimitMs } from "@tern/protocol";
import { AgentError } from "../../errors.ts";
import { parsePing } from "../diagnostics.ts";
import { runLines } from "./run-lines.ts";
import type { StreamContext } from "./stream-context.ts";

export function pingArgv(p: PingParams): string[] {
  return [
    "ping",
    "-n",
    "-O",
    "-c",
    String(p.count),
    "-i",
    String(p.intervalMs / 1000),
    "-W",
    String(p.waitMs / 1000),
    ...(p.ipVersion ? [`-${p.ipVersion}`] : []),
    ...(p.source ? ["-I", p.source] : []),
    "--",
    p.target,
  ];
}

export async function runPing(p: PingParams, stream: StreamContext): Promise<PingResult> {
  const r = await runLines(pingArgv(p), { ...stream, timeLimitMs: pingTimeLimitMs(p) });
  if (r.startError) throw new AgentError("INTERNAL", `ping could not start: ${r.startError}`);
  // 2: an error before any probe (unknown host, bad source); with nothing sent that is the answer.
  const parsed = parsePing(r.output);
  if (r.exitCode === 2 && parsed.transmitted === 0 && !r.stopped)
    throw new AgentError("INVALID_REQUEST", `ping: ${r.output.trim().split("\n").pop() ?? "failed"}`);
  const rtt = /= ([\d.]+)\/([\d.]+)\/([\d.]+)\/([\d.]+) ms/.exec(r.output);
  return {
    ...parsed,
    rttMinMs: rtt ? Number(rtt[1]) : null,
    rttMaxMs: rtt ? Number(rtt[3]) : null,
    stopped: r.stopped,
    output: r.output,
  };
}

export const isAddress = (s: string) => IpAddress.safeParse(s).success;
