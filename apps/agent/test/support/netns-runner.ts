/**
 * A real Runner whose commands run inside one network namespace (as the
 * agent does when it is itself started with `ip netns exec`), recording
 * what it ran the way FakeRunner does, so privileged tests can check that a
 * re-apply mutates nothing. Plus readers of a namespace's `ip -j` state.
 */
import type { Netns } from "@tern/netlab";
import { ExecRunner, type RunOptions, type RunResult } from "../../src/runner.ts";
import { RecordingRunner } from "./fake-runner.ts";

export class NetnsRunner extends RecordingRunner {
  private readonly exec = new ExecRunner();
  readonly netns: string;

  constructor(ns: Netns | string) {
    super();
    this.netns = typeof ns === "string" ? ns : ns.name;
  }

  async run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    this.calls.push({ argv: [...argv], options });
    const r = await this.exec.run(["ip", "netns", "exec", this.netns, ...argv], options);
    return { ...r, argv };
  }
}

/** `ip -j` output of a namespace, parsed. */
export async function ipJson<T = Record<string, unknown>[]>(ns: Netns, args: string[]): Promise<T> {
  const r = await ns.exec(["ip", "-j", ...args]);
  return JSON.parse(r.stdout || "[]") as T;
}

export async function addressesOf(ns: Netns, dev: string): Promise<string[]> {
  const links = await ipJson<{ addr_info: { family: string; local: string; prefixlen: number }[] }[]>(ns, [
    "addr",
    "show",
    "dev",
    dev,
  ]);
  return (links[0]?.addr_info ?? []).filter((a) => a.family === "inet").map((a) => `${a.local}/${a.prefixlen}`);
}

export async function routesOf(ns: Netns, ...filter: string[]): Promise<string[]> {
  const routes = await ipJson<{ dst: string; gateway?: string; dev: string; metric?: number; protocol?: string }[]>(ns, [
    "route",
    "show",
    ...filter,
  ]);
  return routes.map(
    (r) =>
      `${r.dst}${r.gateway ? ` via ${r.gateway}` : ""} dev ${r.dev} metric ${r.metric ?? 0}${r.protocol ? ` proto ${r.protocol}` : ""}`,
  );
}

export async function mtuOf(ns: Netns, dev: string): Promise<number> {
  const links = await ipJson<{ mtu: number }[]>(ns, ["link", "show", "dev", dev]);
  return links[0]?.mtu ?? -1;
}
