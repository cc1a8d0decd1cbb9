/**
 * `traceroute` from the router (the `traceroute` package, modern traceroute,
 * in the agent's Debian dependencies; iputils' tracepath is not installed by
 * default): one line per hop as each completes, then the parsed hops.
 */
import { type TracerouteHop, type TracerouteParams, type TracerouteResult, tracerouteTimeLimitMs } from "@tern/protocol";
import { AgentError } from "../../errors.ts";
import { isAddress } from "./ping.ts";
import { runLines } from "./run-lines.ts";
import type { StreamContext } from "./stream-context.ts";

export function tracerouteArgv(p: TracerouteParams): string[] {
  return [
    "traceroute",
    "-n",
    "-q",
    String(p.queries),
    "-w",
    String(Math.round(p.waitMs / 1000)),
    "-m",
    String(p.maxHops),
    ...(p.ipVersion ? [`-${p.ipVersion}`] : []),
    ...(p.source ? (isAddress(p.source) ? ["-s", p.source] : ["-i", p.source]) : []),
    "--",
    p.target,
  ];
}

/** " 3  10.0.0.1  0.512 ms  0.498 ms" or " 4  *" or " 5  10.0.0.9  1.2 ms * 1.1 ms". */
export function parseHop(line: string): TracerouteHop | null {
  const m = /^\s*(\d+)\s+(.*)$/.exec(line);
  if (!m) return null;
  const rest = m[2] ?? "";
  const address = /(?:^|\s)([0-9a-fA-F.:]+[0-9a-fA-F])\s/.exec(`${rest} `)?.[1] ?? null;
  const rttMs = [...rest.matchAll(/([\d.]+) ms/g)].map((x) => Number(x[1]));
  return { hop: Number(m[1]), address: address && /[.:]/.test(address) ? address : null, rttMs };
}

export async function runTraceroute(p: TracerouteParams, stream: StreamContext): Promise<TracerouteResult> {
  const r = await runLines(tracerouteArgv(p), { ...stream, timeLimitMs: tracerouteTimeLimitMs(p) });
  if (r.startError) throw new AgentError("INTERNAL", `traceroute could not start: ${r.startError}`);
  const hops = r.output
    .split("\n")
    .slice(1)
    .map(parseHop)
    .filter((h): h is TracerouteHop => h !== null)
    .slice(0, 64);
  if (r.exitCode !== 0 && hops.length === 0 && !r.stopped)
    throw new AgentError("INVALID_REQUEST", `traceroute: ${r.output.trim().split("\n").pop() ?? "failed"}`);
  return { output: r.output, hops, stopped: r.stopped };
}
