/**
 * A fake Linux router behind the Runner interface: it records every argv and
 * models what `ip` and `dhclient` do to links, addresses and routes (keyed the
 * kernel's way, with EEXIST, unreachable gateways and routes dropped when
 * their gateway's subnet goes), so config-sequence tests see the state their
 * earlier commands left, and a re-apply can prove it issues no command.
 */
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { cidrContains, parseCidr, parseIPv4 } from "@tern/protocol";
import type { ProcessCheck } from "../../src/drivers/links/index.ts";
import { CommandError, type Runner, type RunOptions, type RunResult } from "../../src/runner.ts";

export interface FakeLink {
  name: string;
  mac: string;
  mtu: number;
  up: boolean;
  addresses: string[];
  linkType?: string;
}

export interface FakeRoute {
  dst: string;
  gateway: string | null;
  dev: string;
  metric: number;
  proto: string;
}

type Handler = (argv: string[]) => Partial<RunResult> | undefined;

export class FakeSystem implements Runner {
  readonly calls: string[][] = [];
  links: FakeLink[] = [];
  routes: FakeRoute[] = [];
  private readonly alive = new Set<number>();
  private nextPid = 40000;
  private readonly handlers: Handler[] = [];
  /** Makes the next commands matching `pattern` fail (a broken system). */
  failures: { pattern: RegExp; stderr: string }[] = [];

  readonly processes: ProcessCheck = { alive: async (pid) => this.alive.has(pid) };

  constructor(links: Partial<FakeLink>[] = []) {
    for (const [i, l] of links.entries()) this.addLink(l.name ?? `eth${i}`, l);
  }

  addLink(name: string, l: Partial<FakeLink> = {}): FakeLink {
    const link: FakeLink = {
      name,
      mac: l.mac ?? `02:00:00:00:00:${(this.links.length + 1).toString(16).padStart(2, "0")}`,
      mtu: l.mtu ?? 1500,
      up: l.up ?? false,
      addresses: l.addresses ?? [],
      linkType: l.linkType ?? "ether",
    };
    this.links.push(link);
    return link;
  }

  /** Extra commands (ping, traceroute …): the first handler returning a result answers. */
  on(handler: Handler): void {
    this.handlers.push(handler);
  }

  /** Recorded calls that change something (everything but `ip -j …` reads), as text lines. */
  mutating(): string[] {
    return this.calls.filter((c) => !(c[0] === "ip" && c[1] === "-j")).map((c) => c.join(" "));
  }

  /** Returns and forgets the mutating calls recorded so far. */
  takeMutating(): string[] {
    const out = this.mutating();
    this.calls.length = 0;
    return out;
  }

  async run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    this.calls.push(argv);
    const result = this.dispatch(argv);
    const full: RunResult = { argv, exitCode: result.exitCode ?? 0, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
    if (full.exitCode !== 0 && !options.allowFailure) throw new CommandError(full);
    return full;
  }

  private dispatch(argv: string[]): Partial<RunResult> {
    const text = argv.join(" ");
    const failure = this.failures.find((f) => f.pattern.test(text));
    if (failure) return { exitCode: 2, stderr: failure.stderr };
    for (const h of this.handlers) {
      const r = h(argv);
      if (r) return r;
    }
    if (argv[0] === "ip") return this.ip(argv.slice(1));
    if (argv[0] === "dhclient") return this.dhclient(argv.slice(1));
    return { exitCode: 127, stderr: `fake system: ${argv[0]}: command not modelled` };
  }

  private link(name: string | undefined): FakeLink | undefined {
    return this.links.find((l) => l.name === name);
  }

  private ip(args: string[]): Partial<RunResult> {
    const t = args.join(" ");
    if (t === "-j -s addr show") return { stdout: JSON.stringify(this.links.map((l, i) => this.linkJson(l, i))) };
    if (t.startsWith("-j route show")) {
      const m = /^-j route show(?: table main)?(?: proto (\S+))?$/.exec(t);
      const d = /^-j route show default$/.test(t);
      let routes = this.routes;
      if (d) routes = routes.filter((r) => r.dst === "0.0.0.0/0");
      else if (!m) return { exitCode: 1, stderr: `fake ip: ${t}` };
      else if (m[1]) routes = routes.filter((r) => r.proto === m[1]);
      return { stdout: JSON.stringify(routes.map((r) => this.routeJson(r, !!m?.[1]))) };
    }
    if (args[0] === "-j" || t.startsWith("-j -s -d") || t.startsWith("route show table all") || t === "rule show")
      return { stdout: "(fake)\n" };
    if (args[0] === "link" && args[1] === "set" && args[2] === "dev") {
      const l = this.link(args[3]);
      if (!l) return { exitCode: 1, stderr: `Cannot find device "${args[3]}"` };
      for (let i = 4; i < args.length; i++) {
        if (args[i] === "up") l.up = true;
        else if (args[i] === "down") l.up = false;
        else if (args[i] === "mtu") l.mtu = Number(args[++i]);
      }
      return {};
    }
    if (args[0] === "addr" && (args[1] === "add" || args[1] === "del")) {
      const cidr = args[2] ?? "";
      const l = this.link(args[4]);
      if (!l) return { exitCode: 1, stderr: `Cannot find device "${args[4]}"` };
      if (args[1] === "add") {
        if (l.addresses.includes(cidr)) return { exitCode: 2, stderr: "Error: ipv4: Address already assigned." };
        l.addresses.push(cidr);
      } else {
        if (!l.addresses.includes(cidr)) return { exitCode: 2, stderr: "Error: ipv4: Address not found." };
        l.addresses = l.addresses.filter((a) => a !== cidr);
        // The kernel drops routes whose gateway is no longer on a connected subnet.
        this.routes = this.routes.filter((r) => r.dev !== l.name || r.gateway === null || this.onLink(l, r.gateway));
      }
      return {};
    }
    if (args[0] === "route" && ["add", "replace", "del"].includes(args[1] ?? ""))
      return this.route(args[1] as string, args.slice(2));
    return { exitCode: 1, stderr: `fake ip: unmodelled: ip ${t}` };
  }

  private onLink(l: FakeLink, gateway: string): boolean {
    const gw = parseIPv4(gateway);
    return (
      gw !== null &&
      l.addresses.some((a) => {
        const c = parseCidr(a);
        return c !== null && cidrContains(c, gw);
      })
    );
  }

  private route(verb: string, args: string[]): Partial<RunResult> {
    const dst = args[0] === "default" ? "0.0.0.0/0" : (args[0] ?? "");
    const opt = (k: string) => {
      const i = args.indexOf(k);
      return i >= 0 ? args[i + 1] : undefined;
    };
    const metric = Number(opt("metric") ?? 0);
    const proto = opt("proto") ?? "boot";
    const gateway = opt("via") ?? null;
    if (verb === "del") {
      const i = this.routes.findIndex(
        (r) =>
          r.dst === dst &&
          r.metric === metric &&
          r.proto === proto &&
          (gateway === null || r.gateway === gateway) &&
          (opt("dev") === undefined || r.dev === opt("dev")),
      );
      if (i < 0) return { exitCode: 2, stderr: "RTNETLINK answers: No such process" };
      this.routes.splice(i, 1);
      return {};
    }
    const dev =
      opt("dev") ?? this.links.find((l) => gateway !== null && this.onLink(l, gateway))?.name ?? this.links[0]?.name ?? "";
    const l = this.link(dev);
    if (!l) return { exitCode: 1, stderr: `Cannot find device "${dev}"` };
    if (gateway !== null && !this.onLink(l, gateway)) return { exitCode: 2, stderr: "Error: Nexthop has invalid gateway." };
    const existing = this.routes.findIndex((r) => r.dst === dst && r.metric === metric);
    const route: FakeRoute = { dst, gateway, dev, metric, proto };
    if (existing >= 0) {
      if (verb === "add") return { exitCode: 2, stderr: "RTNETLINK answers: File exists" };
      this.routes[existing] = route;
    } else this.routes.push(route);
    return {};
  }

  private dhclient(args: string[]): Partial<RunResult> {
    const pf = args[args.indexOf("-pf") + 1] ?? "";
    if (args.includes("-x")) {
      const pid = Number.parseInt(readFileSafe(pf), 10);
      this.alive.delete(pid);
      try {
        unlinkSync(pf);
      } catch {
        // no pid file
      }
      return { stdout: "Killed old client process\n" };
    }
    const pid = this.nextPid++;
    this.alive.add(pid);
    writeFileSync(pf, `${pid}\n`);
    return {};
  }

  /** Simulates a dhclient dying without clean-up. */
  killAllDhclients(): void {
    this.alive.clear();
  }

  private linkJson(l: FakeLink, i: number): unknown {
    return {
      ifindex: i + 2,
      ifname: l.name,
      flags: l.up ? ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"] : ["BROADCAST", "MULTICAST"],
      mtu: l.mtu,
      operstate: l.up ? "UP" : "DOWN",
      link_type: l.linkType,
      address: l.mac,
      addr_info: l.addresses.map((a) => {
        const [local, len] = a.split("/");
        return { family: "inet", local, prefixlen: Number(len), scope: "global", label: l.name };
      }),
      stats64: { rx: { bytes: 1000 + i }, tx: { bytes: 2000 + i } },
    };
  }

  private routeJson(r: FakeRoute, filteredByProto: boolean): unknown {
    const dst = r.dst === "0.0.0.0/0" ? "default" : r.dst.endsWith("/32") ? r.dst.slice(0, -3) : r.dst;
    return {
      dst,
      ...(r.gateway ? { gateway: r.gateway } : {}),
      dev: r.dev,
      ...(filteredByProto ? {} : { protocol: r.proto }),
      ...(r.metric ? { metric: r.metric } : {}),
      flags: [],
    };
  }
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
