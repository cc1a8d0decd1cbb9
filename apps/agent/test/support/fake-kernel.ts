/**
 * A fake of the kernel state `ip` manages (links, IPv4 addresses with
 * labels, routes with protocol numbers), answering the `ip` commands the
 * daemon drivers run, so config-sequence tests see their own changes.
 */
import type { FakeRunner } from "./daemons/fake-runner.ts";

interface Link {
  kind?: string;
  parent?: string;
  ifId?: number;
}
interface Addr {
  dev: string;
  ip: string;
  prefix: number;
  label?: string;
}
interface Route {
  dst: string;
  dev: string;
  src: string;
  proto: number;
}

const exists = { exitCode: 2, stderr: "RTNETLINK answers: File exists" };
const missing = (dev: string) => ({ exitCode: 1, stderr: `Device "${dev}" does not exist.` });

export class FakeKernel {
  readonly links = new Map<string, Link>();
  readonly addrs: Addr[] = [];
  readonly routes: Route[] = [];
  /** Whether `ip link add … type xfrm` works. */
  xfrm = false;

  constructor(fake: FakeRunner, linkNames: string[] = ["lo"]) {
    for (const n of linkNames) this.links.set(n, {});
    fake.on(/^ip -j -d addr show$/, () => ({ stdout: JSON.stringify([...this.links.keys()].map((n) => this.linkJson(n))) }));
    fake.on(/^ip -j -4 addr show dev \S+$/, (a) => {
      const dev = a.at(-1) ?? "";
      return this.links.has(dev) ? { stdout: JSON.stringify([this.linkJson(dev)]) } : missing(dev);
    });
    fake.on(/^ip -j -4 addr show$/, () => ({ stdout: JSON.stringify([...this.links.keys()].map((n) => this.linkJson(n))) }));
    fake.on(/^ip -j link show dev \S+$/, (a) => (this.links.has(a.at(-1) ?? "") ? { stdout: "[]" } : missing(a.at(-1) ?? "")));
    fake.on(/^ip -j -4 route show table main proto \d+$/, (a) => {
      const proto = Number(a.at(-1));
      const rows = this.routes
        .filter((r) => r.proto === proto)
        .map((r) => ({ dst: r.dst.endsWith("/32") ? r.dst.slice(0, -3) : r.dst, dev: r.dev, prefsrc: r.src }));
      return { stdout: JSON.stringify(rows) };
    });
    fake.on(/^ip addr (add|del) \S+ dev \S+( label \S+)?$/, (a) => {
      const [ip = "", len = "32"] = (a[3] ?? "").split("/");
      const dev = a[5] ?? "";
      if (!this.links.has(dev)) return missing(dev);
      const i = this.addrs.findIndex((x) => x.dev === dev && x.ip === ip);
      if (a[2] === "add") {
        if (i >= 0) return exists;
        this.addrs.push({ dev, ip, prefix: Number(len), label: a[7] });
      } else {
        if (i < 0) return { exitCode: 2, stderr: "RTNETLINK answers: Cannot assign requested address" };
        this.addrs.splice(i, 1);
        this.dropRoutes((r) => r.src === ip);
      }
      return {};
    });
    fake.on(/^ip route replace \S+ dev \S+ src \S+ table main proto \d+$/, (a) => {
      const [dst = "", dev = "", src = "", proto] = [a[3], a[5], a[7], Number(a[11])];
      if (!this.links.has(dev)) return missing(dev);
      this.dropRoutes((r) => r.dst === dst);
      this.routes.push({ dst, dev, src, proto });
      return {};
    });
    fake.on(/^ip route del \S+ table main proto \d+$/, (a) => {
      const n = this.routes.length;
      this.dropRoutes((r) => r.dst === a[3] && r.proto === Number(a[7]));
      return this.routes.length < n ? {} : { exitCode: 2, stderr: "RTNETLINK answers: No such process" };
    });
    fake.on(/^ip link add \S+ type xfrm/, (a) => {
      if (!this.xfrm) return { exitCode: 2, stderr: "Error: Unknown device type." };
      const name = a[3] ?? "";
      if (this.links.has(name)) return exists;
      const dev = a.indexOf("dev");
      this.links.set(name, { kind: "xfrm", parent: dev >= 0 ? a[dev + 1] : undefined, ifId: Number(a[a.indexOf("if_id") + 1]) });
      return {};
    });
    fake.on(/^ip link del \S+$/, (a) => (this.removeLink(a[3] ?? "") ? {} : missing(a[3] ?? "")));
    fake.on(/^ip link set \S+ up$/, (a) => (this.links.has(a[3] ?? "") ? {} : missing(a[3] ?? "")));
  }

  addLink(name: string): void {
    this.links.set(name, {});
  }

  /** Removes a link with its addresses and the routes through it, as the kernel does. */
  removeLink(name: string): boolean {
    if (!this.links.delete(name)) return false;
    for (let i = this.addrs.length - 1; i >= 0; i--) if (this.addrs[i]?.dev === name) this.addrs.splice(i, 1);
    this.dropRoutes((r) => r.dev === name);
    return true;
  }

  private dropRoutes(match: (r: Route) => boolean): void {
    for (let i = this.routes.length - 1; i >= 0; i--) if (match(this.routes[i] as Route)) this.routes.splice(i, 1);
  }

  private linkJson(name: string): unknown {
    const l = this.links.get(name) ?? {};
    return {
      ifname: name,
      ...(l.kind
        ? { linkinfo: { info_kind: l.kind, info_data: { link: l.parent, if_id: `0x${(l.ifId ?? 0).toString(16)}` } } }
        : {}),
      addr_info: this.addrs
        .filter((a) => a.dev === name)
        .map((a) => ({ family: "inet", local: a.ip, prefixlen: a.prefix, label: a.label ?? name })),
    };
  }
}
