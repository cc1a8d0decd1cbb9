/** Shared helpers of the privileged lab tests: temp state roots, ping/fping summaries, leftovers. */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listNetns, run } from "@tern/netlab";
import { findMarked } from "../src/lab/supervisor.ts";

export const TOPOLOGIES = join(import.meta.dirname, "..", "topologies");

/** A fresh state root; mode 755 so daemons that drop to their own user (FRR) can reach their directories. */
export async function tempStateRoot(): Promise<{ root: string; remove: () => Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), "tern-lab-test-"));
  await chmod(root, 0o755);
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

export interface PingSummary {
  sent: number;
  received: number;
  lossPercent: number;
  min: number;
  avg: number;
  max: number;
  mdev: number;
}

/** Parses `ping -q` output: "N packets transmitted, M received, X% packet loss" and "rtt min/avg/max/mdev = …". */
export function parsePing(out: string): PingSummary {
  const counts =
    /(\d+) packets transmitted, (\d+) received(?:, \+\d+ duplicates)?(?:, \+\d+ errors)?, ([\d.]+)% packet loss/.exec(out);
  if (!counts) throw new Error(`no ping summary in:\n${out}`);
  const rtt = /rtt min\/avg\/max\/mdev = ([\d.]+)\/([\d.]+)\/([\d.]+)\/([\d.]+) ms/.exec(out);
  return {
    sent: Number(counts[1]),
    received: Number(counts[2]),
    lossPercent: Number(counts[3]),
    min: Number(rtt?.[1] ?? Number.NaN),
    avg: Number(rtt?.[2] ?? Number.NaN),
    max: Number(rtt?.[3] ?? Number.NaN),
    mdev: Number(rtt?.[4] ?? Number.NaN),
  };
}

/** `ping -q` from a namespace. */
export async function ping(ns: string, target: string, count: number, intervalS = 0.01): Promise<PingSummary> {
  const r = await run(
    ["ip", "netns", "exec", ns, "ping", "-n", "-q", "-c", String(count), "-i", String(intervalS), "-W", "2", target],
    {
      allowFailure: true,
      timeoutMs: 120_000,
    },
  );
  return parsePing(r.stdout);
}

/**
 * `fping -q -c N` from a namespace: `-p 2 -i 1` sends 500 probes a second, and
 * `-t 1000` matters: fping's default timeout in count mode is the period (2 ms),
 * which would count every delayed reply as lost.
 */
export async function fping(
  ns: string,
  target: string,
  count: number,
): Promise<{ sent: number; received: number; lossPercent: number; avg: number }> {
  const r = await run(
    ["ip", "netns", "exec", ns, "fping", "-q", "-c", String(count), "-p", "2", "-i", "1", "-t", "1000", target],
    {
      allowFailure: true,
      timeoutMs: 120_000,
    },
  );
  const m = /xmt\/rcv\/%loss = (\d+)\/(\d+)\/[\d.]+%(?:, min\/avg\/max = [\d.]+\/([\d.]+)\/[\d.]+)?/.exec(r.stderr);
  if (!m) throw new Error(`no fping summary in:\n${r.stderr}`);
  const sent = Number(m[1]);
  const received = Number(m[2]);
  return { sent, received, lossPercent: (100 * (sent - received)) / sent, avg: Number(m[3] ?? Number.NaN) };
}

/** Namespaces and processes a lab instance still has on the host. */
export async function leftovers(label: string, id: string): Promise<{ namespaces: string[]; processes: number[] }> {
  const prefix = `tn-${label}-${id}-`;
  return {
    namespaces: (await listNetns()).filter((n) => n.startsWith(prefix)),
    processes: (await findMarked(`${label}-${id}`)).map((p) => p.pid),
  };
}

/** Per-probe RTTs (ms) from `fping -C` (lost probes left out), sorted ascending. */
export async function fpingSamples(
  ns: string,
  target: string,
  count: number,
  periodMs = 10,
  extra: string[] = [],
): Promise<number[]> {
  const r = await run(
    ["ip", "netns", "exec", ns, "fping", "-q", "-C", String(count), "-p", String(periodMs), "-t", "1000", ...extra, target],
    {
      allowFailure: true,
      timeoutMs: 120_000,
    },
  );
  const line = r.stderr.split("\n").find((l) => l.includes(" : "));
  if (!line) throw new Error(`no fping -C output in:\n${r.stderr}`);
  return line
    .split(" : ")[1]!
    .trim()
    .split(/\s+/)
    .filter((v) => v !== "-")
    .map(Number)
    .sort((a, b) => a - b);
}

/** The q-quantile (0..1) of sorted samples. */
export function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
