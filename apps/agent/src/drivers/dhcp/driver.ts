/**
 * DHCP server driver (kea-dhcp4). Renders one config for all LAN servers,
 * checks it with `kea-dhcp4 -t` before it replaces the live one, and
 * reconfigures the running server with SIGHUP (kea's config-reload). The
 * LAN interface's address is part of the config, so an address change always
 * reconfigures kea.
 */
import { mkdir, rm } from "node:fs/promises";
import { type ConfigDhcpServer, cidrContains, type DeviceConfig, parseCidr, parseIPv4 } from "@tern/protocol";
import { readText, removePath } from "../../daemons/files.ts";
import { interfaceAddresses } from "../../daemons/interfaces.ts";
import { type DaemonSpec, daemonPid, launchArgv, signalDaemon, startDaemon, stopDaemon } from "../../daemons/supervisor.ts";
import { serviceActive, signalService, systemctl } from "../../daemons/systemd.ts";
import { AgentError, invalidConfig } from "../../errors.ts";
import { writeFileAtomic } from "../../fs.ts";
import type { Runner } from "../../runner.ts";
import type { ApplyOutcome, Driver, DriverContext, DumpItem, RenderedFile } from "../driver.ts";
import { fileItem } from "../dump.ts";
import { type DhcpPaths, dhcpPaths } from "./paths.ts";
import { renderKeaConf, validateDhcp } from "./render.ts";

export interface DhcpDriverOptions {
  kea?: string;
  unit?: string;
  sysRoot?: string;
  readyTimeoutMs?: number;
  /**
   * Interfaces another driver reset since the last apply (the WiFi driver's
   * restarted access points): a server on one of them restarts, so it never
   * keeps a socket on a link that went down and up (the spec's known fault 4).
   */
  interfaceResets?: { takeResets(): string[] };
}

/** Unix socket paths are limited to 107 bytes. */
const MAX_SOCKET_PATH = 100;

/** The address each server's interface has in the config ("a.b.c.d/n"), or null. */
export function configuredAddresses(config: DeviceConfig): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const s of config.dhcp) out.set(s.interface, config.interfaces.find((i) => i.name === s.interface)?.address ?? null);
  return out;
}

/** For interfaces the config gives no address: the live one inside the server's subnet. */
async function withLiveAddresses(
  runner: Runner,
  servers: ConfigDhcpServer[],
  known: Map<string, string | null>,
): Promise<Map<string, string | null>> {
  const out = new Map(known);
  for (const s of servers) {
    if (out.get(s.interface)) continue;
    const net = parseCidr(s.subnet);
    const live = (await interfaceAddresses(runner, s.interface)).find(
      (a) => net && cidrContains(net, parseIPv4(a.split("/")[0] ?? "") ?? -1),
    );
    out.set(s.interface, live ?? null);
  }
  return out;
}

export class DhcpDriver implements Driver {
  readonly name = "dhcp" as const;

  constructor(private readonly options: DhcpDriverOptions = {}) {}

  private paths(ctx: Pick<DriverContext, "mode" | "runDir">): DhcpPaths {
    return dhcpPaths(ctx.mode, ctx.runDir, this.options.sysRoot);
  }

  private get kea(): string {
    return this.options.kea ?? "/usr/sbin/kea-dhcp4";
  }

  private get unit(): string {
    return this.options.unit ?? "kea-dhcp4-server";
  }

  private spec(paths: DhcpPaths): DaemonSpec {
    return {
      name: "kea-dhcp4",
      comm: "kea-dhcp4",
      argv: [this.kea, "-c", paths.conf],
      env: paths.env,
      pidFile: paths.pidFile,
      launch: "foreground",
      writesPidFile: true,
      outputFile: paths.outputFile,
      readySocket: paths.socket,
      logFile: paths.log,
      readyTimeoutMs: this.options.readyTimeoutMs,
    };
  }

  private file(config: DeviceConfig, paths: DhcpPaths, addresses: ReadonlyMap<string, string | null>): RenderedFile {
    return {
      path: paths.mode === "standalone" ? "kea-dhcp4.conf" : paths.conf,
      content: renderKeaConf(config.dhcp, addresses, paths),
      mode: 0o644,
    };
  }

  private validate(config: DeviceConfig, paths: DhcpPaths, addresses: ReadonlyMap<string, string | null>): void {
    validateDhcp(config.dhcp, addresses);
    if (Buffer.byteLength(paths.socket) > MAX_SOCKET_PATH)
      throw invalidConfig("runDir", `${paths.socket} is too long for a unix socket`);
  }

  plan(
    config: DeviceConfig,
    ctx: Pick<DriverContext, "mode" | "runDir" | "stateDir">,
  ): { files: RenderedFile[]; commands: string[][] } {
    if (config.dhcp.length === 0) return { files: [], commands: [] };
    const paths = this.paths(ctx);
    const addresses = configuredAddresses(config);
    this.validate(config, paths, addresses);
    const start = paths.mode === "standalone" ? launchArgv(this.spec(paths)) : ["systemctl", "start", this.unit];
    return { files: [this.file(config, paths, addresses)], commands: [[this.kea, "-t", paths.conf], start] };
  }

  async apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    const paths = this.paths(ctx);
    const resets = this.options.interfaceResets?.takeResets() ?? [];
    if (config.dhcp.length === 0) return { changed: await this.teardown(ctx, paths) };
    const addresses = await withLiveAddresses(ctx.runner, config.dhcp, configuredAddresses(config));
    this.validate(config, paths, addresses);
    const content = this.file(config, paths, addresses).content;
    const confChanged = (await readText(paths.conf)) !== content;
    if (confChanged) await this.check(ctx, paths, content);

    const running =
      paths.mode === "standalone"
        ? (await daemonPid(ctx.runner, this.spec(paths))) !== null
        : await serviceActive(ctx.runner, this.unit);
    if (confChanged) await writeFileAtomic(paths.conf, content, 0o644);
    if (!running) {
      if (paths.mode === "standalone") await startDaemon(ctx.runner, this.spec(paths));
      else await systemctl(ctx.runner, "start", this.unit);
      return { changed: true };
    }
    const reset = config.dhcp.map((s) => s.interface).filter((i) => resets.includes(i));
    if (reset.length > 0) {
      // A full restart, not a reload: the server opens fresh sockets on the interfaces that went down and up.
      if (paths.mode === "standalone") {
        await stopDaemon(ctx.runner, this.spec(paths));
        await startDaemon(ctx.runner, this.spec(paths));
      } else await systemctl(ctx.runner, "restart", this.unit);
      ctx.log.info("dhcp: kea-dhcp4 restarted: its interfaces were reset", { interfaces: reset });
      return { changed: true };
    }
    if (confChanged) {
      // SIGHUP is kea's config-reload: it re-reads the file, re-detects interfaces and reopens its sockets.
      if (paths.mode === "standalone") {
        if (!(await signalDaemon(ctx.runner, this.spec(paths), "HUP")))
          throw new AgentError("DAEMON_FAILED", "kea-dhcp4 exited before it could be reconfigured");
      } else await signalService(ctx.runner, this.unit, "HUP");
      ctx.log.info("dhcp: kea-dhcp4 reconfigured", {
        servers: config.dhcp.map((s) => `${s.interface} ${addresses.get(s.interface) ?? "?"}`),
      });
    }
    return { changed: confChanged };
  }

  /** `kea-dhcp4 -t` on the new config before it goes live; its complaint becomes an INVALID_CONFIG error. */
  private async check(ctx: DriverContext, paths: DhcpPaths, content: string): Promise<void> {
    await mkdir(paths.dir, { recursive: true });
    await writeFileAtomic(paths.candidate, content, 0o644);
    try {
      const r = await ctx.runner.run([this.kea, "-t", paths.candidate], { env: paths.env, allowFailure: true });
      if (r.exitCode !== 0) {
        const why = `${r.stderr}\n${r.stdout}`
          .split("\n")
          .filter((l) => /ERROR|error|failed/i.test(l))
          .slice(-3)
          .join(" | ");
        throw invalidConfig("dhcp", `kea-dhcp4 rejects the rendered configuration: ${why || `exit ${r.exitCode}`}`);
      }
    } finally {
      await rm(paths.candidate, { force: true });
    }
  }

  /** The kea config in force and the lease database (the log is in the run directory's copy). */
  async dump(_config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]> {
    const paths = this.paths(ctx);
    return [await fileItem("kea-dhcp4.conf", paths.conf), await fileItem("leases4.csv", paths.leases)];
  }

  private async teardown(ctx: DriverContext, paths: DhcpPaths): Promise<boolean> {
    let changed = false;
    if (paths.mode === "standalone") {
      if (await stopDaemon(ctx.runner, this.spec(paths))) changed = true;
    } else {
      if (await serviceActive(ctx.runner, this.unit)) {
        await systemctl(ctx.runner, "stop", this.unit);
        changed = true;
      }
      if (await removePath(paths.conf)) changed = true;
    }
    if (await removePath(paths.dir)) changed = true;
    return changed;
  }
}
