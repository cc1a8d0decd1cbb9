/**
 * WiFi access point driver (hostapd). For each interface whose config
 * carries `wifi` it renders a hostapd.conf (./render.ts) and runs one hostapd
 * for it: its own instance in standalone mode, Debian's
 * `hostapd@<ifname>.service` in system mode. A changed config (SSID, band,
 * channel, country, security, passphrase) restarts that hostapd: band and
 * channel cannot change on a running AP.
 *
 * The spec's known fault (a band switch 2.4 → 5 GHz leaves the WiFi
 * interface's DHCP server stale until the router restarts) comes from that
 * restart: hostapd takes the interface down and up, and a DHCP server bound
 * to it keeps a dead socket. So every (re)start of a hostapd is recorded as
 * an interface reset, and the DHCP driver, which runs after this one in the
 * same apply, restarts its server when an interface it serves was reset
 * (`takeResets()`, wired in ../registry.ts).
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { ConfigInterface, ConfigWifi, DeviceConfig } from "@tern/protocol";
import { listNames, readText } from "../../daemons/files.ts";
import { type DaemonSpec, daemonPid, launchArgv, startDaemon, stopDaemon } from "../../daemons/supervisor.ts";
import { serviceActive, systemctl } from "../../daemons/systemd.ts";
import { pollUntil } from "../../daemons/wait.ts";
import { writeFileAtomic } from "../../fs.ts";
import type { ApplyOutcome, Driver, DriverContext, DumpItem, RenderedFile } from "../driver.ts";
import { commandItem } from "../dump.ts";
import { type WifiPaths, wifiPaths } from "./paths.ts";
import { redactHostapd, renderHostapdConf } from "./render.ts";

export interface WifiDriverOptions {
  hostapd?: string;
  sysRoot?: string;
  readyTimeoutMs?: number;
  /** How long to wait for the interface to run again (carrier) after hostapd started; default 15 s. */
  carrierTimeoutMs?: number;
}

/** Interfaces whose link a driver reset (took down and up) since the last call; the DHCP driver asks. */
export interface InterfaceResets {
  takeResets(): string[];
}

type WifiInterface = ConfigInterface & { wifi: ConfigWifi };
const OWNED_SUFFIX = ".ap";

const wifiInterfaces = (config: DeviceConfig): WifiInterface[] =>
  config.interfaces.filter((i): i is WifiInterface => i.wifi !== undefined);

export class WifiDriver implements Driver, InterfaceResets {
  readonly name = "wifi" as const;
  private readonly resets = new Set<string>();
  /** The hostapd pid of each access point as this driver last saw it, to notice a restart behind its back. */
  private readonly pids = new Map<string, number | null>();

  constructor(private readonly options: WifiDriverOptions = {}) {}

  takeResets(): string[] {
    const out = [...this.resets].sort();
    this.resets.clear();
    return out;
  }

  private paths(ctx: Pick<DriverContext, "mode" | "runDir">): WifiPaths {
    return wifiPaths(ctx.mode, ctx.runDir, this.options.sysRoot);
  }

  private spec(paths: WifiPaths, ifname: string): DaemonSpec {
    return {
      name: `hostapd (${ifname})`,
      comm: "hostapd",
      argv: [this.options.hostapd ?? "/usr/sbin/hostapd", paths.conf(ifname)],
      pidFile: paths.pidFile(ifname),
      launch: "foreground",
      outputFile: paths.outputFile(ifname),
      readySocket: join(paths.ctrlDir, ifname),
      readyTimeoutMs: this.options.readyTimeoutMs,
    };
  }

  private render(iface: WifiInterface, paths: WifiPaths): string {
    return renderHostapdConf(iface.wifi, { ifname: iface.name, ctrlDir: paths.ctrlDir });
  }

  plan(config: DeviceConfig, ctx: Pick<DriverContext, "mode" | "runDir">): { files: RenderedFile[]; commands: string[][] } {
    const paths = this.paths(ctx);
    const files: RenderedFile[] = [];
    const commands: string[][] = [];
    for (const i of wifiInterfaces(config)) {
      files.push({
        path: paths.mode === "standalone" ? `hostapd-${i.name}.conf` : paths.conf(i.name),
        content: redactHostapd(this.render(i, paths)),
        mode: 0o600,
      });
      commands.push(
        paths.mode === "standalone" ? launchArgv(this.spec(paths, i.name)) : ["systemctl", "restart", paths.unit(i.name)],
      );
    }
    return { files, commands };
  }

  private running(ctx: DriverContext, paths: WifiPaths, ifname: string): Promise<boolean> {
    return paths.mode === "standalone"
      ? daemonPid(ctx.runner, this.spec(paths, ifname)).then((p) => p !== null)
      : serviceActive(ctx.runner, paths.unit(ifname));
  }

  /** hostapd's pid for `ifname`, null when it does not run (systemd's MainPID in system mode). */
  private async pid(ctx: DriverContext, paths: WifiPaths, ifname: string): Promise<number | null> {
    if (paths.mode === "standalone") return daemonPid(ctx.runner, this.spec(paths, ifname));
    const r = await ctx.runner.run(["systemctl", "show", "-p", "MainPID", "--value", paths.unit(ifname)], { allowFailure: true });
    const pid = Number(r.stdout.trim());
    return r.exitCode === 0 && pid > 0 ? pid : null;
  }

  /**
   * Between applies: an access point whose hostapd died is started again, and
   * one that systemd restarted by itself (`Restart=on-failure`) is noticed by
   * its new pid. Either way the interface was reset, so a reconcile is
   * requested: the DHCP driver then restarts the server of that interface.
   */
  async heal(config: DeviceConfig, ctx: DriverContext): Promise<string[]> {
    const paths = this.paths(ctx);
    const done: string[] = [];
    for (const iface of wifiInterfaces(config)) {
      if (!this.pids.has(iface.name)) continue; // not applied by this process yet
      try {
        let pid = await this.pid(ctx, paths, iface.name);
        if (pid === null && paths.mode === "standalone") {
          await this.start(ctx, paths, iface.name);
          pid = await this.pid(ctx, paths, iface.name);
          done.push(`hostapd (${iface.name}) was not running: started`);
        } else if (pid !== null && pid !== this.pids.get(iface.name)) {
          this.resets.add(iface.name);
          done.push(`hostapd (${iface.name}) was restarted outside the agent`);
        } else continue;
        this.pids.set(iface.name, pid);
        ctx.requestReconcile?.(`wifi: access point on ${iface.name} restarted`);
      } catch (err) {
        done.push(`hostapd (${iface.name}): ${String(err)}`);
      }
    }
    return done;
  }

  private async stop(ctx: DriverContext, paths: WifiPaths, ifname: string): Promise<void> {
    if (paths.mode === "standalone") await stopDaemon(ctx.runner, this.spec(paths, ifname));
    else if (await serviceActive(ctx.runner, paths.unit(ifname))) await systemctl(ctx.runner, "stop", paths.unit(ifname));
  }

  private async start(ctx: DriverContext, paths: WifiPaths, ifname: string): Promise<void> {
    // Marked before the start: a hostapd that fails half-way has already touched the interface.
    this.resets.add(ifname);
    if (paths.mode === "standalone") await startDaemon(ctx.runner, this.spec(paths, ifname));
    else await systemctl(ctx.runner, "restart", paths.unit(ifname));
    // hostapd takes the interface down and up; it runs again (carrier) once the AP is enabled. A DHCP
    // server started before that opens no socket on it and never retries (kea: "interface is not
    // running"), which is the stale server of the spec's known fault. So the DHCP driver runs after this.
    const running = await pollUntil(() => this.carrier(ctx, ifname), this.options.carrierTimeoutMs ?? 15_000);
    if (!running) ctx.log.warn("wifi: the interface did not come up after hostapd started", { interface: ifname });
  }

  /** True when `ifname` is up with a carrier (operstate UP). */
  private async carrier(ctx: DriverContext, ifname: string): Promise<boolean> {
    const r = await ctx.runner.run(["ip", "-j", "link", "show", "dev", ifname], { allowFailure: true });
    if (r.exitCode !== 0) return false;
    const [link] = JSON.parse(r.stdout || "[]") as { operstate?: string }[];
    return link?.operstate === "UP";
  }

  async apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    const paths = this.paths(ctx);
    const wanted = wifiInterfaces(config);
    let changed = false;
    for (const name of await listNames(paths.dir, OWNED_SUFFIX)) {
      const ifname = name.slice(0, -OWNED_SUFFIX.length);
      if (wanted.some((i) => i.name === ifname)) continue;
      await this.stop(ctx, paths, ifname);
      await rm(paths.conf(ifname), { force: true });
      await rm(join(paths.dir, name), { force: true });
      this.pids.delete(ifname);
      this.resets.add(ifname);
      ctx.log.info("wifi: access point removed", { interface: ifname });
      changed = true;
    }
    for (const iface of wanted) {
      const content = this.render(iface, paths);
      const confChanged = (await readText(paths.conf(iface.name))) !== content;
      const running = await this.running(ctx, paths, iface.name);
      if (!confChanged && running) {
        if (!this.pids.has(iface.name)) this.pids.set(iface.name, await this.pid(ctx, paths, iface.name));
        continue;
      }
      await writeFileAtomic(join(paths.dir, `${iface.name}${OWNED_SUFFIX}`), "", 0o644);
      if (confChanged) await writeFileAtomic(paths.conf(iface.name), content, 0o600);
      if (running) await this.stop(ctx, paths, iface.name);
      await this.start(ctx, paths, iface.name);
      this.pids.set(iface.name, await this.pid(ctx, paths, iface.name));
      ctx.log.info(running ? "wifi: access point restarted with a new configuration" : "wifi: access point started", {
        interface: iface.name,
        band: iface.wifi.band,
        channel: iface.wifi.channel,
      });
      changed = true;
    }
    return { changed };
  }

  async inspect(config: DeviceConfig, ctx: DriverContext) {
    const paths = this.paths(ctx);
    const data = await Promise.all(
      wifiInterfaces(config).map(async (i) => ({
        interface: i.name,
        band: i.wifi.band,
        channel: i.wifi.channel,
        running: await this.running(ctx, paths, i.name),
      })),
    );
    return { lines: data.map((d) => `${d.interface}: ${d.band} ch ${d.channel} ${d.running ? "running" : "NOT running"}`), data };
  }

  async dump(config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]> {
    const paths = this.paths(ctx);
    const items: DumpItem[] = [];
    for (const i of wifiInterfaces(config)) {
      items.push({ name: `hostapd-${i.name}.conf`, content: redactHostapd((await readText(paths.conf(i.name))) ?? "missing\n") });
      items.push(
        await commandItem(ctx, `hostapd_cli-${i.name}-status.txt`, ["hostapd_cli", "-p", paths.ctrlDir, "-i", i.name, "status"]),
      );
    }
    return items;
  }
}
