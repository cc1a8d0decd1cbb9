/**
 * VRRP driver (keepalived, VRRP v3). Renders keepalived.conf and the script
 * keepalived starts to read its notify FIFO, which appends every state change,
 * in order, to a file the driver watches, so a transition reaches
 * `ctx.notify()` at once. Config changes are applied with
 * a reload (SIGHUP), which keeps the state of unchanged instances.
 */
import { mkdir } from "node:fs/promises";
import type { DeviceConfig } from "@tern/protocol";
import { differs, readText, removePath, writeChanged } from "../../daemons/files.ts";
import { type DaemonSpec, daemonPid, launchArgv, signalDaemon, startDaemon, stopDaemon } from "../../daemons/supervisor.ts";
import { serviceActive, systemctl } from "../../daemons/systemd.ts";
import { writeFileAtomic } from "../../fs.ts";
import type { ApplyOutcome, Driver, DriverContext, DumpItem, RenderedFile, StatusPart } from "../driver.ts";
import { commandItem, fileItem } from "../dump.ts";
import { type VrrpPaths, vrrpPaths } from "./paths.ts";
import { renderKeepalivedConf, renderNotifyScript, validateVrrp } from "./render.ts";
import { type GroupState, groupStates, parseTransitions, TransitionWatcher } from "./transitions.ts";

export interface VrrpDriverOptions {
  keepalived?: string;
  unit?: string;
  sysRoot?: string;
  readyTimeoutMs?: number;
}

export class VrrpDriver implements Driver {
  readonly name = "vrrp" as const;
  private watcher: TransitionWatcher | null = null;
  private notify: (reason: string) => void = () => {};

  constructor(private readonly options: VrrpDriverOptions = {}) {}

  private paths(ctx: Pick<DriverContext, "mode" | "runDir">): VrrpPaths {
    return vrrpPaths(ctx.mode, ctx.runDir, this.options.sysRoot);
  }

  private get unit(): string {
    return this.options.unit ?? "keepalived";
  }

  private spec(paths: VrrpPaths): DaemonSpec {
    return {
      name: "keepalived",
      comm: "keepalived",
      // -P VRRP only, -n stay in the foreground (start-stop-daemon detaches it), -l -D -G log details to stdout.
      argv: [
        this.options.keepalived ?? "/usr/sbin/keepalived",
        "-P",
        "-n",
        "-l",
        "-D",
        "-G",
        "-f",
        paths.conf,
        "-p",
        paths.pidFile,
        "-r",
        paths.vrrpPidFile,
      ],
      pidFile: paths.pidFile,
      launch: "foreground",
      writesPidFile: true,
      staleFiles: [paths.vrrpPidFile],
      outputFile: paths.outputFile,
      readyTimeoutMs: this.options.readyTimeoutMs,
    };
  }

  private files(config: DeviceConfig, paths: VrrpPaths): RenderedFile[] {
    const rel = (p: string) => (paths.mode === "standalone" ? p.slice(paths.dir.length + 1) : p);
    return [
      {
        path: rel(paths.conf),
        content: renderKeepalivedConf(config.vrrp, { fifo: paths.notifyFifo, script: paths.notifyScript }),
        mode: 0o644,
      },
      // keepalived's script security refuses scripts writable by others.
      { path: rel(paths.notifyScript), content: renderNotifyScript(paths.transitions), mode: 0o755 },
    ];
  }

  plan(
    config: DeviceConfig,
    ctx: Pick<DriverContext, "mode" | "runDir" | "stateDir">,
  ): { files: RenderedFile[]; commands: string[][] } {
    if (config.vrrp.length === 0) return { files: [], commands: [] };
    validateVrrp(config.vrrp);
    const paths = this.paths(ctx);
    const start = paths.mode === "standalone" ? launchArgv(this.spec(paths)) : ["systemctl", "start", this.unit];
    return { files: this.files(config, paths), commands: [start] };
  }

  async apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    const paths = this.paths(ctx);
    this.notify = ctx.notify;
    if (config.vrrp.length === 0) return { changed: await this.teardown(ctx, paths) };
    validateVrrp(config.vrrp);
    const files = this.files(config, paths);
    const confChanged = await differs(paths.dir, files[0] as RenderedFile);
    await mkdir(paths.dir, { recursive: true });
    const written = await writeChanged(paths.dir, files);
    let changed = written.length > 0;
    await this.watch(paths);

    const running = await this.running(ctx, paths);
    if (!running) {
      // A new run: earlier transitions describe a keepalived that is gone.
      await writeFileAtomic(paths.transitions, "", 0o644);
      this.watcher?.reset();
      if (paths.mode === "standalone") await startDaemon(ctx.runner, this.spec(paths));
      else await systemctl(ctx.runner, "start", this.unit);
      changed = true;
    } else if (confChanged) {
      if (paths.mode === "standalone") await signalDaemon(ctx.runner, this.spec(paths), "HUP");
      else await systemctl(ctx.runner, "reload", this.unit);
      changed = true;
    }
    return { changed };
  }

  private async running(ctx: DriverContext, paths: VrrpPaths): Promise<boolean> {
    if (paths.mode === "system") return serviceActive(ctx.runner, this.unit);
    return (await daemonPid(ctx.runner, this.spec(paths))) !== null;
  }

  private async watch(paths: VrrpPaths): Promise<void> {
    if (this.watcher?.path === paths.transitions && this.watcher.running) return;
    this.watcher?.stop();
    this.watcher = new TransitionWatcher(paths.transitions, (t) => this.notify(`vrrp ${t.groupId} ${t.state}`));
    await this.watcher.start();
  }

  /** Stops keepalived (it releases the virtual IPs on TERM), stops watching, removes the files. */
  private async teardown(ctx: DriverContext, paths: VrrpPaths): Promise<boolean> {
    let changed = false;
    if (paths.mode === "standalone") {
      if (await stopDaemon(ctx.runner, this.spec(paths))) changed = true;
    } else if (await serviceActive(ctx.runner, this.unit)) {
      await systemctl(ctx.runner, "stop", this.unit);
      changed = true;
    }
    this.watcher?.stop();
    this.watcher = null;
    if (paths.mode === "system") {
      for (const p of [paths.conf, paths.notifyScript]) if (await removePath(p)) changed = true;
    }
    if (await removePath(paths.dir)) changed = true;
    return changed;
  }

  /** The state of each configured group, from the transitions keepalived reported. */
  async states(config: DeviceConfig, ctx: DriverContext): Promise<GroupState[]> {
    if (config.vrrp.length === 0) return [];
    const paths = this.paths(ctx);
    const running = await this.running(ctx, paths);
    const text = (await readText(paths.transitions)) ?? "";
    return groupStates(config.vrrp, parseTransitions(text), running);
  }

  async observe(config: DeviceConfig, ctx: DriverContext): Promise<StatusPart> {
    return { vrrp: await this.states(config, ctx) };
  }

  /** keepalived.conf, the transitions keepalived reported, the state per group, and the virtual IPs' interfaces. */
  async dump(config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]> {
    const paths = this.paths(ctx);
    const items = [await fileItem("keepalived.conf", paths.conf), await fileItem("transitions.log", paths.transitions)];
    items.push({ name: "states.json", content: `${JSON.stringify(await this.states(config, ctx), null, 2)}\n` });
    for (const dev of new Set(config.vrrp.map((g) => g.interface)))
      items.push(await commandItem(ctx, `ip-addr-${dev}.json`, ["ip", "-j", "addr", "show", "dev", dev]));
    return items;
  }

  /** Stops watching the transitions file (agent shutdown). keepalived keeps running. */
  close(): void {
    this.watcher?.stop();
    this.watcher = null;
  }
}
