/**
 * One fake of the kernel state `ip` and `sysctl` manage, registered on a
 * FakeRunner: links (with MTU, up, XFRM kind), IPv4 addresses with labels,
 * routes in tables (protocol, metric, preferred source, blackhole), policy
 * rules and sysctls. It answers the commands every driver runs the way the
 * kernel would (EEXIST, unreachable next hops, routes dropped when their
 * gateway's subnet or their source address goes, empty numbered tables that
 * "do not exist"), so config-sequence tests see the state their earlier
 * commands left and a re-apply can prove it changes nothing.
 */
import { cidrContains, parseCidr, parseIPv4 } from "@tern/protocol";
import type { FakeRunner, Reply } from "./fake-runner.ts";

export interface FakeLink {
  name: string;
  mac: string;
  mtu: number;
  up: boolean;
  linkType: string;
  /** "xfrm" for XFRM interfaces. */
  kind?: string;
  parent?: string;
  ifId?: number;
  /** IPv4 addresses as "a.b.c.d/n", kernel order. */
  addresses: string[];
  /** Address → label, for labelled addresses (`lo:tern-ike`). */
  labels: Record<string, string>;
}

export interface FakeRoute {
  /** "main" or a table number. */
  table: string;
  /** Normalized: "0.0.0.0/0" for default, "/32" for hosts. */
  dst: string;
  gateway: string | null;
  dev: string;
  metric: number;
  proto: string;
  src?: string;
  type?: "blackhole";
}

export interface FakeRule {
  priority: number;
  fwmark?: string;
  fwmask?: string;
  /** `from ADDR` (source routing); absent = from all. */
  src?: string;
  /** `suppress_prefixlength N`. */
  suppress?: number;
  table: string;
}

const fail = (stderr: string, exitCode = 2): Reply => ({ exitCode, stderr });
const noDevice = (dev: string): Reply => ({ exitCode: 1, stderr: `Cannot find device "${dev}"` });

function normalizeDst(dst: string): string {
  if (dst === "default") return "0.0.0.0/0";
  return dst.includes("/") ? dst : `${dst}/32`;
}

/** Values following keywords: `opt(["via"])` etc. */
function options(args: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < args.length - 1; i++)
    if (
      [
        "via",
        "dev",
        "src",
        "metric",
        "proto",
        "table",
        "label",
        "priority",
        "fwmark",
        "lookup",
        "type",
        "if_id",
        "mtu",
        "from",
        "suppress_prefixlength",
      ].includes(args[i]!)
    )
      out.set(args[i]!, args[++i]!);
  return out;
}

export class FakeKernel {
  readonly links: FakeLink[] = [];
  routes: FakeRoute[] = [];
  readonly rules: FakeRule[] = [
    { priority: 0, table: "local" },
    { priority: 220, fwmark: "0x4242", fwmask: "0xffffffff", table: "220" },
    { priority: 32766, table: "main" },
    { priority: 32767, table: "default" },
  ];
  readonly sysctls = new Map<string, string>([["net.ipv4.ip_forward", "0"]]);
  /** Whether `ip link add … type xfrm` works (this lab's kernel: no). */
  xfrm = false;

  constructor(runner: FakeRunner, links: (string | (Partial<FakeLink> & { name: string }))[] = []) {
    this.addLink("lo", { linkType: "loopback", up: true, mtu: 65536 });
    for (const l of links) typeof l === "string" ? this.addLink(l) : this.addLink(l.name, l);
    runner.on(["ip"], (argv) => this.ip(argv.slice(1)));
    runner.on(["sysctl"], (argv) => this.sysctl(argv.slice(1)));
  }

  link(name: string | undefined): FakeLink | undefined {
    return this.links.find((l) => l.name === name);
  }

  addLink(name: string, l: Partial<FakeLink> = {}): FakeLink {
    const link: FakeLink = {
      name,
      mac: l.mac ?? `02:00:00:00:00:${this.links.length.toString(16).padStart(2, "0")}`,
      mtu: l.mtu ?? 1500,
      up: l.up ?? false,
      linkType: l.linkType ?? "ether",
      addresses: l.addresses ?? [],
      labels: l.labels ?? {},
      ...(l.kind ? { kind: l.kind, parent: l.parent, ifId: l.ifId } : {}),
    };
    this.links.push(link);
    return link;
  }

  /** Removes a link with its addresses and the routes through it, as the kernel does. */
  removeLink(name: string): boolean {
    const i = this.links.findIndex((l) => l.name === name);
    if (i < 0) return false;
    this.links.splice(i, 1);
    this.routes = this.routes.filter((r) => r.dev !== name);
    return true;
  }

  addAddress(dev: string, cidr: string, label?: string): void {
    const l = this.link(dev);
    if (!l) throw new Error(`fake kernel: no link ${dev}`);
    l.addresses.push(cidr);
    if (label) l.labels[cidr] = label;
  }

  /** Routes of a table as "dst via gw dev metric proto" lines (tests compare these). */
  routeLines(table = "main"): string[] {
    return this.routes
      .filter((r) => r.table === table)
      .map((r) =>
        [
          r.type ?? "",
          r.dst,
          r.gateway ? `via ${r.gateway}` : "",
          r.dev ? `dev ${r.dev}` : "",
          r.src ? `src ${r.src}` : "",
          `metric ${r.metric}`,
          `proto ${r.proto}`,
        ]
          .filter(Boolean)
          .join(" "),
      );
  }

  /** The default route of numbered `table` as "via GW dev DEV", "blackhole", or null when the table is empty. */
  defaultRoute(table: number): string | null {
    // The lowest metric wins, as in the kernel (a table may end in a blackhole default).
    const r = this.routes
      .filter((x) => x.table === String(table) && x.dst === "0.0.0.0/0")
      .sort((a, b) => a.metric - b.metric)[0];
    if (!r) return null;
    return r.type === "blackhole" ? "blackhole" : `via ${r.gateway} dev ${r.dev}`;
  }

  /** Owned policy rules as "priority mark/mask table" lines. */
  ownedRules(): string[] {
    return this.rules
      .filter((r) => r.priority >= 29745 && r.priority < 30255)
      .map((r) => `${r.priority} ${r.fwmark}/${r.fwmask} ${r.table}${r.suppress !== undefined ? ` suppress ${r.suppress}` : ""}`);
  }

  /** The device a next hop is directly reachable through: a connected subnet or a link-scope route. */
  private nexthopDev(gateway: string, dev?: string): string | null {
    const gw = parseIPv4(gateway);
    if (gw === null) return null;
    for (const l of this.links) {
      if (dev && l.name !== dev) continue;
      if (l.addresses.some((a) => cidrContains(parseCidr(a)!, gw))) return l.name;
    }
    const linkRoute = this.routes.find(
      (r) =>
        r.table === "main" && r.gateway === null && !r.type && (!dev || r.dev === dev) && cidrContains(parseCidr(r.dst)!, gw),
    );
    return linkRoute?.dev ?? null;
  }

  private ip(args: string[]): Reply {
    const flags = new Set<string>();
    let i = 0;
    while (args[i]?.startsWith("-")) flags.add(args[i++]!);
    const object = args[i++];
    const verb = args[i++] ?? "show";
    const rest = args.slice(i);
    const json = flags.has("-j");
    switch (object) {
      case "addr":
      case "address":
        return this.addr(verb, rest, json);
      case "link":
        return this.linkCommand(verb, rest, json);
      case "route":
        return this.route(verb, rest, json);
      case "rule":
        return this.rule(verb, rest, json);
      default:
        return fail(`fake kernel: ip ${args.join(" ")}: not modelled`, 1);
    }
  }

  private linkJson(l: FakeLink, withAddresses: boolean): unknown {
    return {
      ifindex: this.links.indexOf(l) + 1,
      ifname: l.name,
      flags: l.up ? ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"] : ["BROADCAST", "MULTICAST"],
      mtu: l.mtu,
      operstate: l.linkType === "loopback" ? "UNKNOWN" : l.up ? "UP" : "DOWN",
      link_type: l.linkType,
      address: l.mac,
      ...(l.kind
        ? { linkinfo: { info_kind: l.kind, info_data: { link: l.parent, if_id: `0x${(l.ifId ?? 0).toString(16)}` } } }
        : {}),
      ...(withAddresses
        ? {
            addr_info: l.addresses.map((a) => {
              const [local, len] = a.split("/");
              return { family: "inet", local, prefixlen: Number(len), scope: "global", label: l.labels[a] ?? l.name };
            }),
          }
        : {}),
      stats64: {
        rx: { bytes: 1000 + this.links.indexOf(l), packets: 10 + this.links.indexOf(l), errors: 1, dropped: 2 },
        tx: { bytes: 2000 + this.links.indexOf(l), packets: 20 + this.links.indexOf(l), errors: 3, dropped: 4 },
      },
    };
  }

  private show(links: FakeLink[], json: boolean, withAddresses: boolean): Reply {
    if (json) return { stdout: JSON.stringify(links.map((l) => this.linkJson(l, withAddresses))) };
    return { stdout: links.map((l) => `${l.name}: mtu ${l.mtu} ${l.addresses.join(" ")}\n`).join("") };
  }

  private addr(verb: string, rest: string[], json: boolean): Reply {
    const opt = options(rest);
    if (verb === "show" || verb === "list") {
      const dev = opt.get("dev");
      if (dev !== undefined && !this.link(dev)) return { exitCode: 1, stderr: `Device "${dev}" does not exist.` };
      return this.show(dev ? [this.link(dev)!] : this.links, json, true);
    }
    const cidr = rest[0] ?? "";
    const l = this.link(opt.get("dev"));
    if (!l) return noDevice(opt.get("dev") ?? "");
    if (verb === "add") {
      if (l.addresses.includes(cidr)) return fail("Error: ipv4: Address already assigned.");
      l.addresses.push(cidr);
      if (opt.get("label")) l.labels[cidr] = opt.get("label")!;
      return {};
    }
    if (verb === "del") {
      if (!l.addresses.includes(cidr)) return fail("Error: ipv4: Address not found.");
      l.addresses = l.addresses.filter((a) => a !== cidr);
      delete l.labels[cidr];
      const ip = cidr.split("/")[0];
      // The kernel drops routes whose source went, and routes whose gateway is no longer on a connected subnet.
      this.routes = this.routes.filter(
        (r) => r.src !== ip && (r.dev !== l.name || r.gateway === null || this.nexthopDev(r.gateway, l.name) !== null),
      );
      return {};
    }
    return fail(`fake kernel: ip addr ${verb}: not modelled`, 1);
  }

  private linkCommand(verb: string, rest: string[], json: boolean): Reply {
    const opt = options(rest);
    if (verb === "show" || verb === "list") {
      const dev = opt.get("dev") ?? (rest[0] && rest[0] !== "dev" ? rest[0] : undefined);
      if (dev !== undefined && !this.link(dev)) return { exitCode: 1, stderr: `Device "${dev}" does not exist.` };
      return this.show(dev ? [this.link(dev)!] : this.links, json, false);
    }
    const name = rest[0] === "dev" ? rest[1] : rest[0];
    if (verb === "set") {
      const l = this.link(name);
      if (!l) return noDevice(name ?? "");
      if (rest.includes("up")) l.up = true;
      if (rest.includes("down")) l.up = false;
      if (opt.has("mtu")) l.mtu = Number(opt.get("mtu"));
      return {};
    }
    if (verb === "add") {
      if (opt.get("type") !== "xfrm" || !this.xfrm) return fail("Error: Unknown device type.");
      if (this.link(name)) return fail("RTNETLINK answers: File exists");
      this.addLink(name ?? "", { kind: "xfrm", parent: opt.get("dev"), ifId: Number(opt.get("if_id")) });
      return {};
    }
    if (verb === "del") return this.removeLink(name ?? "") ? {} : noDevice(name ?? "");
    return fail(`fake kernel: ip link ${verb}: not modelled`, 1);
  }

  private routeJson(r: FakeRoute, filteredByProto: boolean): unknown {
    const dst = r.dst === "0.0.0.0/0" ? "default" : r.dst.endsWith("/32") ? r.dst.slice(0, -3) : r.dst;
    return {
      ...(r.type ? { type: r.type } : {}),
      dst,
      ...(r.gateway ? { gateway: r.gateway } : {}),
      ...(r.dev ? { dev: r.dev } : {}),
      ...(filteredByProto ? {} : { protocol: r.proto }),
      ...(r.src ? { prefsrc: r.src } : {}),
      ...(r.metric ? { metric: r.metric } : {}),
      flags: [],
    };
  }

  private route(verb: string, rest: string[], json: boolean): Reply {
    const opt = options(rest);
    const table = opt.get("table") ?? "main";
    if (verb === "show" || verb === "list") {
      if (table === "all" && json) {
        // Every table; non-main routes name theirs, as ip -j does.
        const all = this.routes.filter((r) => !opt.has("proto") || r.proto === opt.get("proto"));
        return {
          stdout: JSON.stringify(
            all.map((r) => ({
              ...(this.routeJson(r, opt.has("proto")) as object),
              ...(r.table !== "main" ? { table: r.table } : {}),
            })),
          ),
        };
      }
      if (table === "all") return { stdout: this.links.length ? this.routeLines().join("\n") : "" };
      let routes = this.routes.filter((r) => r.table === table);
      if (opt.has("proto")) routes = routes.filter((r) => r.proto === opt.get("proto"));
      if (rest.includes("default")) routes = routes.filter((r) => r.dst === "0.0.0.0/0");
      if (routes.length === 0 && /^\d+$/.test(table) && !this.routes.some((r) => r.table === table))
        return { exitCode: 2, stdout: "[", stderr: "Error: ipv4: FIB table does not exist." };
      if (!json) return { stdout: this.routeLines(table).join("\n") };
      return { stdout: JSON.stringify(routes.map((r) => this.routeJson(r, opt.has("proto")))) };
    }
    if (verb === "flush") {
      this.routes = this.routes.filter((r) => r.table !== table);
      return {};
    }
    const blackhole = rest[0] === "blackhole";
    const dst = normalizeDst((blackhole ? rest[1] : rest[0]) ?? "");
    const metric = Number(opt.get("metric") ?? 0);
    if (verb === "del") {
      const i = this.routes.findIndex(
        (r) =>
          r.table === table &&
          r.dst === dst &&
          (!opt.has("metric") || r.metric === metric) &&
          (!opt.has("proto") || r.proto === opt.get("proto")) &&
          (!opt.has("via") || r.gateway === opt.get("via")) &&
          (!opt.has("dev") || r.dev === opt.get("dev")),
      );
      if (i < 0) return fail("RTNETLINK answers: No such process");
      this.routes.splice(i, 1);
      return {};
    }
    if (verb !== "add" && verb !== "replace") return fail(`fake kernel: ip route ${verb}: not modelled`, 1);
    const gateway = opt.get("via") ?? null;
    let dev = opt.get("dev") ?? "";
    if (!blackhole) {
      if (dev && !this.link(dev)) return noDevice(dev);
      if (gateway !== null) {
        const through = this.nexthopDev(gateway, dev || undefined);
        if (through === null) return fail("Error: Nexthop has invalid gateway.");
        dev = through;
      }
    }
    const route: FakeRoute = {
      table,
      dst,
      gateway,
      dev: blackhole ? "" : dev,
      metric,
      proto: opt.get("proto") ?? "boot",
      ...(opt.get("src") ? { src: opt.get("src") } : {}),
      ...(blackhole ? { type: "blackhole" as const } : {}),
    };
    const existing = this.routes.findIndex((r) => r.table === table && r.dst === dst && r.metric === metric);
    if (existing >= 0) {
      if (verb === "add") return fail("RTNETLINK answers: File exists");
      this.routes[existing] = route;
    } else this.routes.push(route);
    return {};
  }

  private rule(verb: string, rest: string[], json: boolean): Reply {
    const opt = options(rest);
    if (verb === "show" || verb === "list") {
      const sorted = [...this.rules].sort((a, b) => a.priority - b.priority);
      if (json)
        return {
          stdout: JSON.stringify(
            sorted.map(({ suppress, ...r }) => ({
              src: "all",
              ...r,
              ...(suppress !== undefined ? { suppress_prefixlen: suppress } : {}),
            })),
          ),
        };
      return { stdout: sorted.map((r) => `${r.priority}:\tfrom all lookup ${r.table}\n`).join("") };
    }
    const priority = Number(opt.get("priority"));
    if (verb === "add") {
      const [fwmark, fwmask] = (opt.get("fwmark") ?? "").split("/");
      this.rules.push({
        priority,
        ...(fwmark ? { fwmark, fwmask: fwmask ?? "0xffffffff" } : {}),
        ...(opt.has("from") ? { src: opt.get("from") } : {}),
        ...(opt.has("suppress_prefixlength") ? { suppress: Number(opt.get("suppress_prefixlength")) } : {}),
        table: opt.get("lookup") ?? "main",
      });
      return {};
    }
    if (verb === "del") {
      const i = this.rules.findIndex((r) => r.priority === priority);
      if (i < 0) return fail("RTNETLINK answers: No such file or directory");
      this.rules.splice(i, 1);
      return {};
    }
    return fail(`fake kernel: ip rule ${verb}: not modelled`, 1);
  }

  private sysctl(args: string[]): Reply {
    const write = args.includes("-w");
    const names = args.filter((a) => !a.startsWith("-"));
    if (write) {
      for (const kv of names) {
        const [k, v] = kv.split("=");
        this.sysctls.set(k ?? "", v ?? "");
      }
      return {};
    }
    const value = (k: string) => this.sysctls.get(k) ?? "0";
    return { stdout: names.map((k) => (args.includes("-n") ? `${value(k)}\n` : `${k} = ${value(k)}\n`)).join("") };
  }
}
