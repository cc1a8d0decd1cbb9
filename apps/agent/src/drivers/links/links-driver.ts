/**
 * The `links` driver: interfaces (up, MTU), addresses, static routes, a
 * default route per WAN gateway, the WAN DHCP client and IPv4 forwarding. It observes with
 * `ip -j`, diffs (./diff.ts) and runs only the difference; it removes only
 * what it added (./owned.ts for addresses and MTUs, ROUTE_PROTO for routes).
 */
import { type FSWatcher, watch } from "node:fs";
import { readdir, readFile, unlink } from "node:fs/promises";
import type { DeviceConfig, InterfaceState } from "@tern/protocol";
import { AgentError } from "../../errors.ts";
import { writeFileAtomic } from "../../fs.ts";
import { describeWanChange, type WanChange } from "../../kernel-events/types.ts";
import type { ApplyOutcome, Driver, DriverContext, DumpItem, RenderedFile, StatusPart } from "../driver.ts";
import { commandItem } from "../dump.ts";
import type { LteStatusReader } from "../lte/index.ts";
import { desiredLinks, verifyLinks } from "./desired.ts";
import {
  type DhcpClientPaths,
  type DhcpLease,
  dhcpClientPaths,
  readLease,
  renderDhclientConf,
  renderDhclientScript,
  runningDhclient,
} from "./dhcp-client.ts";
import { actionArgv, diffLinks, diffRoutes, type LinkAction, type LinkSystem, pruneOwned, type RouteAction } from "./diff.ts";
import { FORWARDING_ON, needsForwarding, syncForwarding } from "./forwarding.ts";
import { type ObservedLink, parseAddrShow, parseRoutes, ROUTE_PROTO } from "./iproute.ts";
import { loadOwned, type OwnedLinks, saveOwned } from "./owned.ts";
import { desiredSourceRoutes, syncSourceRoutes } from "./source-routing.ts";

const PID_FILE = /^dhclient-(.+)\.pid$/;
const LEASE_FILE = /^dhclient-(.+)\.lease$/;

export interface LinksDriverOptions {
  /** Reads the modem state of interfaces configured as LTE; without it `lte` is always null. */
  lte?: LteStatusReader;
}

export class LinksDriver implements Driver {
  readonly name = "links" as const;
  private watcher: FSWatcher | null = null;
  private watchTimer: NodeJS.Timeout | null = null;
  /** Lease text each DHCP interface had at the last apply, to tell a real change from a renewal. */
  private appliedLeases = new Map<string, string>();
  /** The context of the last apply, for re-apply requests from the lease watch. */
  private ctx: DriverContext | null = null;

  constructor(private readonly options: LinksDriverOptions = {}) {}

  async apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    verifyLinks(config);
    const dhcp = dhcpClientPaths(ctx.runDir);
    const system = await this.observeSystem(ctx, dhcp);
    const missing = config.interfaces.filter((i) => !system.links.some((l) => l.name === i.name));
    if (missing.length > 0)
      throw new AgentError(
        "LINK_NOT_FOUND",
        `interface ${missing.map((i) => `${i.name} (${i.devId})`).join(", ")} not found on this router`,
      );

    for (const i of config.interfaces) {
      const mac = system.links.find((l) => l.name === i.name)?.mac.toLowerCase();
      // Names are what every driver uses; a devId that disagrees means the config was made for other hardware.
      if (i.devId.startsWith("mac:") && mac && i.devId.slice(4).toLowerCase() !== mac)
        ctx.log.warn("interface name and devId disagree; using the name", { name: i.name, devId: i.devId, mac });
    }

    const leases = new Map<string, DhcpLease>();
    const leaseTexts = new Map<string, string>();
    for (const i of config.interfaces.filter((x) => x.dhcp)) {
      const lease = await readLease(dhcp, i.name);
      if (lease) leases.set(i.name, lease);
      leaseTexts.set(i.name, await readFile(dhcp.lease(i.name), "utf8").catch(() => ""));
    }
    const desired = desiredLinks(config, leases);

    const loaded = await loadOwned(ctx.stateDir);
    let owned = pruneOwned(loaded, system);
    if (JSON.stringify(owned) !== JSON.stringify(loaded)) await saveOwned(ctx.stateDir, owned);

    let changed = false;
    if (desired.links.some((l) => l.dhcp)) {
      changed = (await writeFileAtomic(dhcp.conf, renderDhclientConf(), 0o644)) || changed;
      changed = (await writeFileAtomic(dhcp.script, renderDhclientScript(dhcp), 0o755)) || changed;
    }
    for (const dev of system.staleDhcp)
      await this.forgetDhclient(
        dhcp,
        dev,
        desired.links.some((l) => l.name === dev && l.dhcp),
      );

    for (const action of diffLinks(desired, system, owned)) {
      owned = await this.runLinkAction(action, ctx, dhcp, owned);
      changed = true;
    }
    changed = (await syncForwarding(config, ctx)) || changed;
    // Routes after addresses: the kernel drops routes whose gateway became unreachable.
    const ownedRoutes = parseRoutes(
      (await ctx.runner.run(["ip", "-j", "route", "show", "table", "main", "proto", String(ROUTE_PROTO)])).stdout,
    );
    for (const action of diffRoutes(desired.routes, ownedRoutes)) {
      await this.runRouteAction(action, ctx, dhcp);
      changed = true;
    }
    // Each WAN address leaves through its own WAN (IKE/ESP of tunnels bound to it included).
    changed = (await syncSourceRoutes(ctx.runner, desiredSourceRoutes(config, desired))) || changed;

    this.appliedLeases = leaseTexts;
    if (leaseTexts.size > 0) this.watchLeases(dhcp, ctx);
    else this.close();
    return { changed };
  }

  plan(
    config: DeviceConfig,
    ctx: Pick<DriverContext, "mode" | "runDir" | "stateDir">,
  ): { files: RenderedFile[]; commands: string[][] } {
    const dhcp = dhcpClientPaths(ctx.runDir);
    const desired = desiredLinks(config);
    // From scratch: every interface down with an unknown MTU and no address, nothing running, no routes.
    const scratch: LinkSystem = {
      links: desired.links.map((l, i) => ({ ...blankLink(l.name, i), mtu: -1 })),
      dhcpRunning: [],
    };
    const files: RenderedFile[] = desired.links.some((l) => l.dhcp)
      ? [
          { path: "dhclient.conf", content: renderDhclientConf(), mode: 0o644 },
          { path: "dhclient-script.sh", content: renderDhclientScript(dhcp), mode: 0o755 },
        ]
      : [];
    const actions: (LinkAction | RouteAction)[] = [
      ...diffLinks(desired, scratch, { version: 1, addresses: [], mtu: {} }),
      ...desired.routes.map((route): RouteAction => ({ kind: "route-add", route })),
    ];
    const commands = actions.map((a) => actionArgv(a, dhcp));
    if (needsForwarding(config)) commands.splice(commands.length - desired.routes.length, 0, FORWARDING_ON);
    return { files, commands };
  }

  async observe(config: DeviceConfig, ctx: DriverContext): Promise<StatusPart> {
    const links = parseAddrShow((await ctx.runner.run(["ip", "-j", "-s", "addr", "show"])).stdout);
    const defaults = parseRoutes((await ctx.runner.run(["ip", "-j", "route", "show", "default"])).stdout);
    const byName = new Map(links.map((l) => [l.name, l]));
    const selected: { devId: string; name: string; link: ObservedLink | undefined }[] =
      config.interfaces.length > 0
        ? config.interfaces.map((i) => ({ devId: i.devId, name: i.name, link: byName.get(i.name) }))
        : links.filter((l) => l.linkType === "ether").map((l) => ({ devId: `mac:${l.mac}`, name: l.name, link: l }));
    const lte = new Map<string, InterfaceState["lte"]>();
    for (const i of config.interfaces)
      if (i.lte && this.options.lte)
        lte.set(
          i.name,
          // A modem that cannot be read leaves only its own part empty, not the interface's status.
          await this.options.lte.lteStatus(i.name, ctx).catch((err: unknown) => {
            ctx.log.warn("lte status unavailable", { interface: i.name, error: String(err) });
            return null;
          }),
        );
    const interfaces = selected.map(({ devId, name, link }): InterfaceState => {
      const [ip, prefix] = (link?.addresses[0]?.cidr ?? "").split("/");
      const gateway = defaults
        .filter((r) => r.dev === name && r.gateway !== null)
        .sort((a, b) => a.metric - b.metric)[0]?.gateway;
      return {
        devId,
        name,
        operState: link?.operState ?? "unknown",
        IPv4: ip ?? "",
        IPv4Mask: prefix === undefined ? null : Number(prefix),
        gateway: gateway ?? "",
        mac: link?.mac ?? "",
        mtu: link?.mtu ?? 0,
        rxBytes: link?.rxBytes ?? 0,
        txBytes: link?.txBytes ?? 0,
        ...(link?.counters ?? {}),
        publicIp: "",
        publicPort: null,
        lte: lte.get(name) ?? null,
      };
    });
    return { interfaces };
  }

  async dump(_config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]> {
    const dhcp = dhcpClientPaths(ctx.runDir);
    const items: DumpItem[] = [
      await commandItem(ctx, "ip-addr.json", ["ip", "-j", "-s", "-d", "addr", "show"]),
      await commandItem(ctx, "ip-route-all.txt", ["ip", "route", "show", "table", "all"]),
      await commandItem(ctx, "ip-route-owned.json", ["ip", "-j", "route", "show", "table", "main", "proto", String(ROUTE_PROTO)]),
      await commandItem(ctx, "ip-rule.txt", ["ip", "rule", "show"]),
    ];
    items.push({
      name: "owned.json",
      content: `${JSON.stringify(await loadOwned(ctx.stateDir).catch((e: unknown) => String(e)), null, 2)}\n`,
    });
    for (const f of await readdir(dhcp.dir).catch(() => [] as string[]))
      if (/^dhclient-.+\.(lease|events\.log)$/.test(f))
        items.push({ name: f, content: await readFile(`${dhcp.dir}/${f}`, "utf8").catch(String) });
    return items;
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.watchTimer) clearTimeout(this.watchTimer);
    this.watchTimer = null;
  }

  /** Links, live agent-started dhclients, and pid files whose dhclient is gone. */
  private async observeSystem(ctx: DriverContext, dhcp: DhcpClientPaths): Promise<LinkSystem & { staleDhcp: string[] }> {
    const links = parseAddrShow((await ctx.runner.run(["ip", "-j", "-s", "addr", "show"])).stdout);
    const dhcpRunning: string[] = [];
    const staleDhcp: string[] = [];
    for (const f of await readdir(dhcp.dir).catch(() => [] as string[])) {
      const dev = PID_FILE.exec(f)?.[1];
      if (dev === undefined) continue;
      if ((await runningDhclient(ctx.runner, dhcp, dev)) !== null) dhcpRunning.push(dev);
      else staleDhcp.push(dev);
    }
    return { links, dhcpRunning: dhcpRunning.sort(), staleDhcp };
  }

  /** A dhclient died: drop its pid file, and its lease unless it will be restarted (it renews from the lease database). */
  private async forgetDhclient(dhcp: DhcpClientPaths, dev: string, restarting: boolean): Promise<void> {
    await unlink(dhcp.pid(dev)).catch(() => {});
    if (!restarting) await unlink(dhcp.lease(dev)).catch(() => {});
  }

  private async runLinkAction(
    action: LinkAction,
    ctx: DriverContext,
    dhcp: DhcpClientPaths,
    owned: OwnedLinks,
  ): Promise<OwnedLinks> {
    const argv = actionArgv(action, dhcp);
    switch (action.kind) {
      case "addr-add": {
        // Write-ahead: own it before it exists, so a crash right after the command still knows it.
        const next = { ...owned, addresses: [...owned.addresses, { dev: action.dev, cidr: action.cidr }] };
        await saveOwned(ctx.stateDir, next);
        try {
          await ctx.runner.run(argv);
        } catch (err) {
          await saveOwned(ctx.stateDir, owned);
          throw err;
        }
        ctx.log.info("address added", { dev: action.dev, cidr: action.cidr });
        return next;
      }
      case "addr-del": {
        await ctx.runner.run(argv);
        const next = { ...owned, addresses: owned.addresses.filter((a) => !(a.dev === action.dev && a.cidr === action.cidr)) };
        await saveOwned(ctx.stateDir, next);
        ctx.log.info("address removed", { dev: action.dev, cidr: action.cidr });
        return next;
      }
      case "mtu": {
        if (action.original === null) {
          await ctx.runner.run(argv);
          const { [action.dev]: _restored, ...rest } = owned.mtu;
          const next = { ...owned, mtu: rest };
          await saveOwned(ctx.stateDir, next);
          return next;
        }
        const next = action.dev in owned.mtu ? owned : { ...owned, mtu: { ...owned.mtu, [action.dev]: action.original } };
        if (next !== owned) await saveOwned(ctx.stateDir, next);
        await ctx.runner.run(argv);
        return next;
      }
      case "dhcp-stop":
        await ctx.runner.run(argv);
        await this.forgetDhclient(dhcp, action.dev, false);
        ctx.log.info("dhcp client stopped", { dev: action.dev });
        return owned;
      case "dhcp-start":
        await ctx.runner.run(argv);
        ctx.log.info("dhcp client started", { dev: action.dev });
        return owned;
      case "up":
        await ctx.runner.run(argv);
        return owned;
    }
  }

  private async runRouteAction(action: RouteAction, ctx: DriverContext, dhcp: DhcpClientPaths): Promise<void> {
    await ctx.runner.run(actionArgv(action, dhcp));
    ctx.log.info(`route ${action.kind.slice("route-".length)}`, {
      dst: action.route.dst,
      gateway: action.route.gateway,
      metric: action.route.metric,
    });
  }

  /**
   * The kernel reported a WAN's address gone or replaced: when the config
   * gives that WAN a static address, apply again so it is put back (the agent
   * owns it; a DHCP WAN follows its lease instead).
   */
  async wanChanged(changes: readonly WanChange[], config: DeviceConfig, ctx: DriverContext): Promise<void> {
    for (const c of changes) {
      const i = config.interfaces.find((x) => x.name === c.ifname);
      if (!i || i.dhcp || !i.address || !c.before || c.before.address === c.after.address) continue;
      if (c.after.address === i.address.split("/")[0]) continue;
      ctx.requestReconcile?.(`${describeWanChange(c)}: the configured address ${i.address} is put back`);
    }
  }

  /** Re-applies when a lease changes (new address or gateway), so DHCP WANs follow their server without a new config. */
  private watchLeases(dhcp: DhcpClientPaths, ctx: DriverContext): void {
    this.ctx = ctx;
    if (!ctx.requestReconcile) return;
    const schedule = () => {
      if (this.watchTimer) clearTimeout(this.watchTimer);
      this.watchTimer = setTimeout(() => void this.checkLeases(dhcp), 100);
      this.watchTimer.unref();
    };
    if (!this.watcher) {
      this.watcher = watch(dhcp.dir, (_event, file) => {
        if (file !== null && LEASE_FILE.test(String(file))) schedule();
      });
      this.watcher.unref();
      this.watcher.on("error", (err) => ctx.log.warn("lease watch failed", { error: String(err) }));
    }
    // A lease written between reading the leases and now raised no event we saw: look once.
    schedule();
  }

  private async checkLeases(dhcp: DhcpClientPaths): Promise<void> {
    const ctx = this.ctx;
    if (!ctx?.requestReconcile) return;
    for (const [dev, before] of this.appliedLeases) {
      const now = await readFile(dhcp.lease(dev), "utf8").catch(() => "");
      if (sameLease(before, now)) continue;
      ctx.log.info("dhcp lease changed", { dev });
      ctx.notify(`dhcp lease changed on ${dev}`);
      ctx.requestReconcile(`dhcp lease changed on ${dev}`);
      return;
    }
  }
}

/** Renewals rewrite the file with the same address and routers: that is not a change worth an apply. */
function sameLease(a: string, b: string): boolean {
  const key = (t: string) =>
    t
      .split("\n")
      .filter((l) => /^(ip|mask|routers)=/.test(l))
      .join("\n");
  return key(a) === key(b);
}

function blankLink(name: string, i: number): ObservedLink {
  return {
    name,
    ifindex: i + 1,
    mac: "",
    mtu: 0,
    adminUp: false,
    operState: "down",
    linkType: "ether",
    addresses: [],
    rxBytes: 0,
    txBytes: 0,
    counters: null,
  };
}
