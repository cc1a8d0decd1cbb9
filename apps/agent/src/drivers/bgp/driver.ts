/**
 * BGP driver (FRR zebra + bgpd). Standalone: starts this agent's own zebra
 * and bgpd with per-instance sockets and pid files, from the rendered
 * zebra.conf/bgpd.conf; later changes go live through frr-reload.py
 * (`--daemon bgpd`, so zebra's forwarding lines are never touched) and, for
 * zebra's one owned line, vtysh. System: the integrated /etc/frr/frr.conf and
 * `systemctl reload frr`. Unchanged files: no command but liveness checks.
 */
import { mkdir, readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { BgpState, ConfigBgp, DeviceConfig } from "@tern/protocol";
import { differs, readText, removePath, writeChanged } from "../../daemons/files.ts";
import { type DaemonSpec, daemonPid, launchArgv, startDaemon, stopDaemon } from "../../daemons/supervisor.ts";
import { serviceActive, systemctl } from "../../daemons/systemd.ts";
import { AgentError } from "../../errors.ts";
import type { ApplyOutcome, Driver, DriverContext, DumpItem, RenderedFile, StatusPart } from "../driver.ts";
import { commandItem, fileItem } from "../dump.ts";
import { type BgpPaths, bgpPaths } from "./paths.ts";
import {
  needsNhtViaDefault,
  neighborsToReset,
  renderBgpdConf,
  renderIntegratedConf,
  renderVtyshConf,
  renderZebraConf,
  withBgpd,
} from "./render.ts";
import { bgpState } from "./state.ts";
import { validateBgp } from "./validate.ts";

export interface BgpDriverOptions {
  /** Where zebra, bgpd and frr-reload.py are (Debian: /usr/lib/frr). */
  frrDir?: string;
  /** Directory holding vtysh, for frr-reload.py. */
  vtyshDir?: string;
  /** User and group the daemons run as. */
  user?: string;
  unit?: string;
  sysRoot?: string;
  readyTimeoutMs?: number;
}

export class BgpDriver implements Driver {
  readonly name = "bgp" as const;

  constructor(private readonly options: BgpDriverOptions = {}) {}

  private paths(ctx: Pick<DriverContext, "mode" | "runDir">): BgpPaths {
    return bgpPaths(ctx.mode, ctx.runDir, this.options.sysRoot);
  }

  private get frrDir(): string {
    return this.options.frrDir ?? "/usr/lib/frr";
  }

  private get user(): string {
    return this.options.user ?? "frr";
  }

  private get unit(): string {
    return this.options.unit ?? "frr";
  }

  private spec(paths: BgpPaths, daemon: "zebra" | "bgpd"): DaemonSpec {
    const pidFile = daemon === "zebra" ? paths.zebraPid : paths.bgpdPid;
    const conf = daemon === "zebra" ? paths.zebraConf : paths.bgpdConf;
    const log = daemon === "zebra" ? paths.zebraLog : paths.bgpdLog;
    return {
      name: daemon,
      comm: daemon,
      argv: [
        `${this.frrDir}/${daemon}`,
        "-d",
        "-u",
        this.user,
        "-g",
        this.user,
        "--vty_socket",
        paths.dir,
        "-z",
        paths.zserv,
        "-P",
        "0",
        "-i",
        pidFile,
        "-f",
        conf,
        "--log",
        `file:${log}`,
      ],
      pidFile,
      launch: "forks",
      readySocket: daemon === "zebra" ? paths.zserv : `${paths.dir}/bgpd.vty`,
      logFile: log,
      readyTimeoutMs: this.options.readyTimeoutMs,
    };
  }

  /** vtysh against this agent's FRR, with its own vtysh.conf. */
  private vtysh(paths: BgpPaths, args: string[]): string[] {
    return paths.mode === "system"
      ? ["vtysh", ...args]
      : ["vtysh", "--vty_socket", paths.dir, "--config_dir", paths.dir, ...args];
  }

  private files(bgp: ConfigBgp, paths: BgpPaths): RenderedFile[] {
    if (paths.mode === "system") return [{ path: paths.frrConf, content: renderIntegratedConf(bgp), mode: 0o640 }];
    return [
      { path: "zebra.conf", content: renderZebraConf(bgp), mode: 0o644 },
      { path: "bgpd.conf", content: renderBgpdConf(bgp), mode: 0o600 },
      { path: "vtysh.conf", content: renderVtyshConf(), mode: 0o644 },
    ];
  }

  private reloadArgv(paths: BgpPaths): string[] {
    return [
      `${this.frrDir}/frr-reload.py`,
      "--reload",
      "--daemon",
      "bgpd",
      "--confdir",
      paths.dir,
      "--vty_socket",
      paths.dir,
      "--rundir",
      paths.dir,
      "--bindir",
      this.options.vtyshDir ?? "/usr/bin",
      paths.bgpdConf,
    ];
  }

  plan(
    config: DeviceConfig,
    ctx: Pick<DriverContext, "mode" | "runDir" | "stateDir">,
  ): { files: RenderedFile[]; commands: string[][] } {
    if (!config.bgp) return { files: [], commands: [] };
    validateBgp(config.bgp);
    const paths = this.paths(ctx);
    const files = this.files(config.bgp, paths);
    if (paths.mode === "system") return { files, commands: [["systemctl", "start", this.unit]] };
    const own = ["install", "-d", "-o", this.user, "-g", this.user, "-m", "0775", paths.dir];
    const chown = ["chown", `${this.user}:${this.user}`, paths.zebraConf, paths.bgpdConf];
    return { files, commands: [own, chown, launchArgv(this.spec(paths, "zebra")), launchArgv(this.spec(paths, "bgpd"))] };
  }

  async apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    const paths = this.paths(ctx);
    if (!config.bgp) return { changed: await this.teardown(ctx, paths) };
    validateBgp(config.bgp);
    return paths.mode === "system" ? this.applySystem(config.bgp, ctx, paths) : this.applyStandalone(config.bgp, ctx, paths);
  }

  private async applyStandalone(bgp: ConfigBgp, ctx: DriverContext, paths: BgpPaths): Promise<ApplyOutcome> {
    const files = this.files(bgp, paths);
    const [zebraFile, bgpdFile] = files as [RenderedFile, RenderedFile, RenderedFile];
    const zebraChanged = await differs(paths.dir, zebraFile);
    const before = await readText(paths.bgpdConf);
    const bgpdChanged = before !== bgpdFile.content;
    let changed = false;
    await mkdir(paths.dir, { recursive: true });
    const written = await writeChanged(paths.dir, files);
    // The daemons drop to the frr user before they read their configs.
    const daemonFiles = written.filter((f) => f !== "vtysh.conf").map((f) => `${paths.dir}/${f}`);
    if (daemonFiles.length > 0) await ctx.runner.run(["chown", `${this.user}:${this.user}`, ...daemonFiles]);
    if (written.length > 0) changed = true;

    const zebra = this.spec(paths, "zebra");
    const bgpd = this.spec(paths, "bgpd");
    const zebraPid = await daemonPid(ctx.runner, zebra);
    const bgpdPid = await daemonPid(ctx.runner, bgpd);
    if (zebraPid === null || bgpdPid === null) {
      // bgpd without its zebra has no routes to install: restart both from the files.
      if (zebraPid === null && bgpdPid !== null) await stopDaemon(ctx.runner, bgpd);
      await ctx.runner.run(["install", "-d", "-o", this.user, "-g", this.user, "-m", "0775", paths.dir]);
      try {
        if (zebraPid === null) await startDaemon(ctx.runner, zebra);
        await startDaemon(ctx.runner, bgpd);
      } catch (err) {
        const blocked = await closedAncestor(paths.dir);
        if (!blocked) throw err;
        throw new AgentError(
          "DAEMON_FAILED",
          `${(err as Error).message}\n(the FRR daemons run as ${this.user} and cannot reach ${paths.dir}: ${blocked} is not searchable by others; chmod o+x it or use a run dir under a searchable path)`,
        );
      }
      ctx.log.info("bgp: FRR started", { dir: paths.dir });
      return { changed: true };
    }
    if (zebraChanged) {
      const no = needsNhtViaDefault(bgp) ? "" : "no ";
      await ctx.runner.run(
        this.vtysh(paths, ["-d", "zebra", "-c", "configure terminal", "-c", `${no}ip nht resolve-via-default`]),
      );
      changed = true;
    }
    if (bgpdChanged) {
      const r = await ctx.runner.run(this.reloadArgv(paths), { allowFailure: true, timeoutMs: 60_000 });
      if (r.exitCode !== 0) {
        throw new AgentError(
          "DAEMON_FAILED",
          `frr-reload.py could not apply ${paths.bgpdConf}: ${(r.stderr || r.stdout).trim().split("\n").slice(-5).join(" | ")}`,
        );
      }
      await this.resetNeighbors(ctx, paths, neighborsToReset(before, bgpdFile.content));
      changed = true;
    }
    return { changed };
  }

  private async applySystem(bgp: ConfigBgp, ctx: DriverContext, paths: BgpPaths): Promise<ApplyOutcome> {
    const daemons = await readFile(paths.daemonsFile, "utf8").catch(() => {
      throw new AgentError("DAEMON_FAILED", `${paths.daemonsFile} is missing: is FRR installed?`);
    });
    const files = [...this.files(bgp, paths), { path: paths.daemonsFile, content: withBgpd(daemons, true), mode: 0o640 }];
    const before = await readText(paths.frrConf);
    const written = await writeChanged(paths.dir, files);
    const active = await serviceActive(ctx.runner, this.unit);
    if (written.includes(paths.daemonsFile)) await systemctl(ctx.runner, "restart", this.unit);
    else if (!active) await systemctl(ctx.runner, "start", this.unit);
    else if (written.includes(paths.frrConf)) {
      await systemctl(ctx.runner, "reload", this.unit);
      await this.resetNeighbors(ctx, paths, neighborsToReset(before, files[0]?.content ?? ""));
    }
    return { changed: written.length > 0 || !active };
  }

  /** Hard-resets sessions whose settings changed, so they reconnect now rather than after connect-retry. */
  private async resetNeighbors(ctx: DriverContext, paths: BgpPaths, ips: string[]): Promise<void> {
    for (const ip of ips) {
      await ctx.runner.run(this.vtysh(paths, ["-c", `clear bgp ${ip}`]), { allowFailure: true });
      ctx.log.info(`bgp: reset session with ${ip} after its settings changed`);
    }
  }

  private async teardown(ctx: DriverContext, paths: BgpPaths): Promise<boolean> {
    let changed = false;
    if (paths.mode === "standalone") {
      if (await stopDaemon(ctx.runner, this.spec(paths, "bgpd"))) changed = true;
      if (await stopDaemon(ctx.runner, this.spec(paths, "zebra"))) changed = true;
      if (await removePath(paths.dir)) changed = true;
      return changed;
    }
    if (await serviceActive(ctx.runner, this.unit)) {
      await systemctl(ctx.runner, "stop", this.unit);
      changed = true;
    }
    if (await removePath(paths.frrConf)) changed = true;
    return changed;
  }

  /** BgpState of the configured neighbors (the bgp-status request answers with this). */
  async status(config: DeviceConfig, ctx: DriverContext): Promise<BgpState | null> {
    if (!config.bgp) return null;
    const paths = this.paths(ctx);
    const running =
      paths.mode === "system"
        ? await serviceActive(ctx.runner, this.unit)
        : (await daemonPid(ctx.runner, this.spec(paths, "bgpd"))) !== null;
    if (!running) return bgpState(config.bgp, null);
    const r = await ctx.runner.run(this.vtysh(paths, ["-c", "show bgp summary json"]), { allowFailure: true });
    return bgpState(config.bgp, r.exitCode === 0 ? r.stdout : null);
  }

  async observe(config: DeviceConfig, ctx: DriverContext): Promise<StatusPart> {
    return { bgp: await this.status(config, ctx) };
  }

  /** Rendered configs (passwords redacted), `show bgp summary`, neighbours and routes as FRR sees them. */
  async dump(config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]> {
    const paths = this.paths(ctx);
    const items =
      paths.mode === "system"
        ? [await fileItem("frr.conf", paths.frrConf)]
        : [await fileItem("zebra.conf", paths.zebraConf), await fileItem("bgpd.conf", paths.bgpdConf)];
    if (!config.bgp) return items;
    for (const [name, command] of [
      ["show-bgp-summary.txt", "show bgp summary"],
      ["show-bgp-neighbors.txt", "show bgp neighbors"],
      ["show-ip-bgp.txt", "show ip bgp"],
      ["show-ip-route.txt", "show ip route"],
    ] as const)
      items.push(await commandItem(ctx, name, this.vtysh(paths, ["-c", command])));
    return items;
  }
}

/** The first directory above `dir` that others cannot search (FRR drops to its own user before it opens its files). */
async function closedAncestor(dir: string): Promise<string | null> {
  for (let d = dirname(dir); ; d = dirname(d)) {
    const st = await stat(d).catch(() => null);
    if (st && (st.mode & 0o001) === 0) return d;
    if (d === dirname(d)) return null;
  }
}
