/** A Runner that runs every command inside one network namespace and records argv (for "no mutating command" checks). */
import type { Netns } from "@tern/netlab";
import { ExecRunner, type Runner, type RunOptions, type RunResult } from "../../src/runner.ts";

export class NetnsRunner implements Runner {
  readonly calls: string[][] = [];
  private readonly exec = new ExecRunner();
  readonly netns: string;

  constructor(ns: Netns | string) {
    this.netns = typeof ns === "string" ? ns : ns.name;
  }

  run(argv: string[], options?: RunOptions): Promise<RunResult> {
    this.calls.push(argv);
    return this.exec.run(["ip", "netns", "exec", this.netns, ...argv], options);
  }

  /** Recorded commands other than `ip -j …` reads, as text; clears the record. */
  takeMutating(): string[] {
    const out = this.calls.filter((c) => !(c[0] === "ip" && c[1] === "-j")).map((c) => c.join(" "));
    this.calls.length = 0;
    return out;
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
