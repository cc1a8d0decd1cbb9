/**
 * IKEv2 driver (strongSwan). Device-to-device tunnels and peer connections
 * from `config.tunnels`: renders swanctl files, loads them with
 * `swanctl --load-all` (charon replaces or removes what changed), owns the
 * tunnel loopbacks and routes, and reads SA state back over VICI. The
 * remote worker VPN (`config.remoteVpn`, remote-access.ts) runs in the same
 * charon: only one daemon can own the IKE ports.
 */
import type { DeviceConfig } from "@tern/protocol";
import { differs, listNames, readText, removePath, resolvePath, writeChanged } from "../../daemons/files.ts";
import { waitForDevice } from "../../daemons/interfaces.ts";
import { type DaemonSpec, daemonPid, launchArgv, startDaemon, stopDaemon } from "../../daemons/supervisor.ts";
import { serviceActive, systemctl } from "../../daemons/systemd.ts";
import { AgentError } from "../../errors.ts";
import { writeFileAtomic } from "../../fs.ts";
import { type HealingLog, healingMode, newSaHealState, repaired, type SaHealState, saRepair } from "../../healing/index.ts";
import { describeWanChange, type WanChange, type WanState } from "../../kernel-events/types.ts";
import { parseWanStates } from "../../kernel-events/wan-state.ts";
import { type LinkQualityLookup, tunnelKey } from "../../probes/types.ts";
import type { RunOptions } from "../../runner.ts";
import type { ApplyOutcome, Driver, DriverContext, DriverDetails, DumpItem, RenderedFile } from "../driver.ts";
import { commandItem, fileItem } from "../dump.ts";
import { type LocalEnd, localEnds } from "./local-wan.ts";
import { CONN_PREFIX, connName, LIBIPSEC_DEVICE, xfrmIfName } from "./names.ts";
import { type Ikev2Paths, ikev2Paths } from "./paths.ts";
import { desiredPlumbing, observePlumbing, type Plumbing, plumbingCommands } from "./plumbing.ts";
import {
  type RenderedRemoteAccess,
  remoteAccessCredentialPaths,
  remoteAccessPlumbing,
  renderRemoteAccess,
} from "./remote-access.ts";
import { type Dataplane, renderIkev2 } from "./render.ts";
import { parseListConns, type TunnelSaState, tunnelSaStates } from "./sas.ts";
import { validateTunnels } from "./validate.ts";

export interface Ikev2DriverOptions {
  /** `auto` (default) probes once whether `ip link add … type xfrm` works; tests and odd kernels may force one. */
  dataplane?: "auto" | Dataplane;
  /** charon-systemd program (standalone). */
  charon?: string;
  /** systemd unit of charon-systemd (system mode). */
  unit?: string;
  /** Prefix for system-mode paths under /etc (tests). */
  sysRoot?: string;
  readyTimeoutMs?: number;
  /** Tunnel probe figures: with them (and `healing`), a CHILD_SA that passes no probes is repaired (docs/healing.md). */
  quality?: LinkQualityLookup;
  healing?: HealingLog;
  /** Period of the stuck-SA check; default 1 s. */
  stuckCheckMs?: number;
}

const XFRM_PROBE = "tern-xprobe";
/** An initiator tunnel without an IKE SA is initiated again at most this often. */
export const REINITIATE_EVERY_MS = 10_000;

export class Ikev2Driver implements Driver {
  readonly name = "ikev2" as const;
  private dataplane: Dataplane | null = null;
  /** When heal() last initiated each connection. */
  private readonly initiatedAt = new Map<string, number>();
  /** Stuck-SA repair: back-off per connection, the report awaiting its "after" figures, the loop. */
  private readonly repairs = new Map<string, SaHealState & { reportId: string | null; at: number }>();
  private stuckTimer: NodeJS.Timeout | null = null;
  private stuckRunning = false;
  private applied: { config: DeviceConfig; ctx: DriverContext } | null = null;
  private applyingNow = false;
  /** The WAN states of the last apply, kept current by wanChanged, and the local end each tunnel got. */
  private wanStates = new Map<string, WanState>();
  private ends: Map<string, LocalEnd> | null = null;

  constructor(private readonly options: Ikev2DriverOptions = {}) {}

  private paths(ctx: Pick<DriverContext, "mode" | "runDir">): Ikev2Paths {
    return ikev2Paths(ctx.mode, ctx.runDir, this.options.sysRoot);
  }

  private charonSpec(paths: Ikev2Paths): DaemonSpec {
    return {
      name: "charon",
      comm: "charon-systemd",
      argv: [this.options.charon ?? "/usr/sbin/charon-systemd"],
      env: { STRONGSWAN_CONF: paths.strongswanConf },
      pidFile: paths.pidFile,
      launch: "foreground",
      outputFile: paths.outputFile,
      logFile: paths.logFile,
      readySocket: paths.vici,
      readyTimeoutMs: this.options.readyTimeoutMs,
    };
  }

  /** argv and env of a swanctl call against this driver's charon. */
  private swanctl(paths: Ikev2Paths, args: string[]): { argv: string[]; options: RunOptions } {
    if (paths.mode === "system") return { argv: ["swanctl", ...args], options: {} };
    return {
      argv: ["swanctl", ...args, "--uri", `unix://${paths.vici}`],
      // SWANCTL_DIR: swanctl reads x509/, x509ca/ and private/ (remote-access credentials) from the driver's directory.
      options: { env: { STRONGSWAN_CONF: paths.strongswanConf, SWANCTL_DIR: paths.credsDir } },
    };
  }

  /** The dataplane in use: XFRM interfaces where the kernel has them, kernel-libipsec otherwise. Probed once, then remembered. */
  async detectDataplane(ctx: DriverContext): Promise<Dataplane> {
    if (this.dataplane) return this.dataplane;
    const paths = this.paths(ctx);
    const forced = this.options.dataplane ?? "auto";
    let dataplane: Dataplane;
    let reason: string;
    const saved = (await readText(paths.dataplaneFile))?.trim();
    if (forced !== "auto") {
      dataplane = forced;
      reason = "set by option";
    } else if (saved === "xfrm" || saved === "libipsec") {
      dataplane = saved;
      reason = `probed earlier (${paths.dataplaneFile})`;
    } else {
      const probe = await ctx.runner.run(["ip", "link", "add", XFRM_PROBE, "type", "xfrm", "if_id", "4242"], {
        allowFailure: true,
      });
      if (probe.exitCode === 0 || /exists/i.test(probe.stderr)) {
        await ctx.runner.run(["ip", "link", "del", XFRM_PROBE], { allowFailure: true });
        dataplane = "xfrm";
        reason = "`ip link add … type xfrm` works";
      } else {
        dataplane = "libipsec";
        reason = `no XFRM interfaces in this kernel (${probe.stderr.trim() || `exit ${probe.exitCode}`})`;
      }
    }
    if (forced === "auto") await writeFileAtomic(paths.dataplaneFile, `${dataplane}\n`);
    ctx.log.info(
      `ikev2: dataplane ${dataplane === "xfrm" ? "XFRM interfaces" : "kernel-libipsec (userspace ESP, one ipsec0 TUN)"}`,
      { reason },
    );
    this.dataplane = dataplane;
    return dataplane;
  }

  /**
   * The devices tunnel traffic of `config` uses: kernel-libipsec's one TUN,
   * or each tunnel's XFRM interface. Probes the dataplane once (the firewall
   * runs before this driver and needs them for LAN NAT); empty without tunnels.
   */
  async tunnelDevices(config: DeviceConfig, ctx: DriverContext): Promise<string[]> {
    if (config.tunnels.length === 0) return [];
    return devicesOf(config, await this.detectDataplane(ctx));
  }

  /** The same without running anything (plan): the dataplane known or forced, kernel-libipsec otherwise, as `plan()` assumes. */
  plannedTunnelDevices(config: DeviceConfig): string[] {
    if (config.tunnels.length === 0) return [];
    return devicesOf(config, this.plannedDataplane());
  }

  private plannedDataplane(): Dataplane {
    const forced = this.options.dataplane;
    return this.dataplane ?? (forced && forced !== "auto" ? forced : "libipsec");
  }

  plan(
    config: DeviceConfig,
    ctx: Pick<DriverContext, "mode" | "runDir" | "stateDir">,
  ): { files: RenderedFile[]; commands: string[][] } {
    if (!inUse(config)) return { files: [], commands: [] };
    validateTunnels(config.tunnels);
    const paths = this.paths(ctx);
    const dataplane = this.plannedDataplane();
    const r = renderIkev2(config.tunnels, dataplane, paths, new Map());
    const ra = config.remoteVpn ? renderRemoteAccess(config.remoteVpn, dataplane, paths) : null;
    const files = [
      r.daemonConf,
      ...(r.swanctlConf ? [r.swanctlConf] : []),
      ...r.conns.map((c) => c.file),
      ...(ra ? [ra.conn.file, ...ra.credentials] : []),
    ];
    const empty: Plumbing = { links: [], addresses: [], routes: [] };
    const plumbing = plumbingCommands(
      empty,
      withRemoteAccess(
        desiredPlumbing(
          r.conns.map((c) => c.tunnel),
          dataplane,
        ),
        config,
        dataplane,
      ),
    );
    const start = paths.mode === "standalone" ? [launchArgv(this.charonSpec(paths))] : [["systemctl", "start", this.unit]];
    const load = this.swanctl(paths, loadArgs(paths, ra !== null)).argv;
    return { files, commands: [...plumbing.links, ...start, load, ...plumbing.routes] };
  }

  private get unit(): string {
    return this.options.unit ?? "strongswan";
  }

  private async running(ctx: DriverContext, paths: Ikev2Paths): Promise<boolean> {
    if (paths.mode === "system") return serviceActive(ctx.runner, this.unit);
    return (await daemonPid(ctx.runner, this.charonSpec(paths))) !== null;
  }

  async apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    this.applyingNow = true;
    try {
      const outcome = await this.applyNow(config, ctx);
      this.applied = config.tunnels.length > 0 ? { config, ctx } : null;
      return outcome;
    } finally {
      this.applyingNow = false;
      this.scheduleStuckCheck();
    }
  }

  private scheduleStuckCheck(): void {
    const wanted = this.applied !== null && !!this.options.quality && !!this.options.healing;
    if (wanted && !this.stuckTimer) {
      this.stuckTimer = setInterval(() => void this.checkStuck(), this.options.stuckCheckMs ?? 1000);
      this.stuckTimer.unref();
    } else if (!wanted && this.stuckTimer) {
      clearInterval(this.stuckTimer);
      this.stuckTimer = null;
    }
  }

  healingReports() {
    return this.options.healing?.pending() ?? [];
  }

  close(): void {
    if (this.stuckTimer) clearInterval(this.stuckTimer);
    this.stuckTimer = null;
    this.applied = null;
  }

  /**
   * Once a second (between applies): a tunnel whose probes went silent for
   * STUCK_AFTER_MS while its IKE SA is up gets its CHILD_SA initiated again
   * (or terminated and initiated when it is installed but passes nothing),
   * with back-off, and the action is reported with the figures before and,
   * once probes are answered again, after. swanctl runs only when a tunnel
   * is silent.
   */
  async checkStuck(): Promise<void> {
    const quality = this.options.quality;
    const log = this.options.healing;
    const a = this.applied;
    if (!a || !quality || !log || this.applyingNow || this.stuckRunning) return;
    const mode = healingMode(a.config);
    if (mode === "off") return;
    this.stuckRunning = true;
    try {
      const now = Date.now();
      const silent = new Map<string, number>();
      for (const t of a.config.tunnels) {
        const q = quality.quality(tunnelKey(t.id));
        const conn = connName(t);
        const r = this.repairs.get(conn);
        if (q?.sinceLastReplyMs === null || q === null) continue;
        if (r?.reportId && q.sinceLastReplyMs < now - r.at) {
          // Answered since the repair: report how long it took and the figures now.
          log.complete(r.reportId, {
            restoredAfterMs: Math.max(0, now - q.sinceLastReplyMs - r.at),
            rtt: q.rttMs,
            loss: q.lossPercent,
            up: q.up,
          });
          r.reportId = null;
        }
        if (q.sinceLastReplyMs >= 1000) silent.set(t.id, q.sinceLastReplyMs);
        else if (r && !r.reportId && now - (r.lastAt ?? 0) > 60_000) this.repairs.delete(conn);
      }
      if (silent.size === 0) return;
      const states = await this.saStates(a.config, a.ctx);
      const paths = this.paths(a.ctx);
      for (const t of a.config.tunnels) {
        const silentMs = silent.get(t.id);
        if (silentMs === undefined) continue;
        const sa = states.find((x) => x.id === t.id);
        if (!sa) continue;
        const state = this.repairs.get(sa.conn) ?? { ...newSaHealState(), reportId: null, at: 0 };
        const repair = saRepair(sa, t.initiator, silentMs, state, now);
        if (!repair) continue;
        const q = quality.quality(tunnelKey(t.id));
        const ike = sa.ikeSas.find((x) => x.state === "ESTABLISHED");
        const report = log.record(
          {
            kind: "sa-reinitiate",
            link: tunnelKey(t.id),
            reason: `${repair.kind === "restart" ? "terminate and initiate" : "initiate"} CHILD_SA ${sa.conn}: ${repair.why}`,
            before: {
              silentMs: Math.round(silentMs),
              loss: q?.lossPercent ?? null,
              ike: ike?.state ?? "none",
              child: ike?.children.map((c) => c.state).join(",") || "none",
              attempt: state.attempts + 1,
            },
            after: null,
          },
          mode === "suggest",
        );
        this.repairs.set(sa.conn, { ...repaired(state, now), reportId: mode === "act" ? report.id : null, at: now });
        a.ctx.log.info(`ikev2: ${mode === "act" ? "repairing" : "would repair"} ${sa.conn}`, { why: repair.why });
        if (mode !== "act") continue;
        if (repair.kind === "restart") {
          const term = this.swanctl(paths, ["--terminate", "--child", sa.conn, "--force", "--timeout", "2"]);
          await a.ctx.runner.run(term.argv, { ...term.options, allowFailure: true });
        }
        const init = this.swanctl(paths, ["--initiate", "--child", sa.conn, "--timeout", "2"]);
        await a.ctx.runner.run(init.argv, { ...init.options, allowFailure: true });
        a.ctx.notify(`healing: ${sa.conn} re-initiated`);
      }
    } catch (err) {
      a.ctx.log.warn("ikev2: stuck-SA check failed", { error: (err as Error).message });
    } finally {
      this.stuckRunning = false;
    }
  }

  private async applyNow(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    const paths = this.paths(ctx);
    if (!inUse(config)) return { changed: await this.teardown(ctx, paths) };
    validateTunnels(config.tunnels);
    const dataplane = await this.detectDataplane(ctx);
    const wans = wanNames(config);
    const states = parseWanStates((await ctx.runner.run(["ip", "-j", "addr", "show"])).stdout, [
      ...new Set([...wans, ...config.tunnels.map((t) => t.localInterface)]),
    ]);
    const ends = localEnds(config.tunnels, wans, states);
    this.wanStates = states;
    this.ends = ends;
    const r = renderIkev2(config.tunnels, dataplane, paths, new Map(), ends);
    const ra = config.remoteVpn ? renderRemoteAccess(config.remoteVpn, dataplane, paths) : null;
    for (const t of r.waiting) ctx.log.warn(`ikev2: tunnel ${t.id} waits for an IPv4 address on ${t.localInterface}`);
    for (const t of config.tunnels) {
      const end = ends.get(t.id);
      if (end?.failedOver)
        ctx.log.info(`ikev2: ${t.localInterface} is down, peer connection ${t.id} leaves from ${end.ifname} (${end.address})`);
    }
    const active = r.conns.map((c) => c.tunnel);
    let changed = false;
    const run = async (argv: string[], options?: RunOptions) => {
      changed = true;
      return ctx.runner.run(argv, options);
    };

    // Loopbacks (and XFRM interfaces) first: libipsec refuses a CHILD_SA whose local selector has no local address.
    let current = await observePlumbing(ctx.runner);
    const desired = withRemoteAccess(desiredPlumbing(active, dataplane, current.localIps), config, dataplane);
    const linkCommands = plumbingCommands(current, desired).links;
    for (const c of linkCommands) await run(c);

    const daemonChanged = await differs(paths.dir, r.daemonConf);
    const existing = (await listNames(paths.connsDir, ".conf"))
      .filter((n) => n.startsWith(CONN_PREFIX))
      .map((n) => n.slice(0, -5));
    const wanted = new Set([...r.conns.map((c) => c.name), ...(ra ? [ra.conn.name] : [])]);
    const changedConns: typeof r.conns = [];
    const previousLocal = new Map<string, string | null>();
    for (const c of r.conns) {
      if (!(await differs(paths.dir, c.file))) continue;
      changedConns.push(c);
      const before = await readText(resolvePath(paths.connsDir, `${c.name}.conf`));
      previousLocal.set(c.name, before === null ? null : (/local_addrs = (\S+)/.exec(before)?.[1] ?? null));
    }
    const movedAddress = (c: (typeof r.conns)[number]) => {
      const before = previousLocal.get(c.name);
      return before != null && before !== /local_addrs = (\S+)/.exec(c.file.content)?.[1];
    };
    const raChanged = ra !== null && (await remoteAccessDiffers(paths.dir, ra));
    const removed = existing.filter((n) => !wanted.has(n));
    const wasRunning = await this.running(ctx, paths);

    const files = [
      r.daemonConf,
      ...(r.swanctlConf ? [r.swanctlConf] : []),
      ...r.conns.map((c) => c.file),
      ...(ra ? [ra.conn.file, ...ra.credentials] : []),
    ];
    if ((await writeChanged(paths.dir, files)).length > 0) changed = true;
    for (const n of removed) if (await removePath(resolvePath(paths.connsDir, `${n}.conf`))) changed = true;
    let credsRemoved = false;
    if (!ra) for (const f of remoteAccessCredentialPaths(paths)) if (await removePath(f)) credsRemoved = true;
    if (credsRemoved) changed = true;

    const started = !wasRunning || daemonChanged;
    if (!wasRunning) await this.startCharon(ctx, paths);
    else if (daemonChanged) await this.restartCharon(ctx, paths);
    if (started) changed = true;
    if (started && dataplane === "libipsec" && !(await waitForDevice(ctx.runner, LIBIPSEC_DEVICE))) {
      throw new AgentError("DAEMON_FAILED", `charon started but kernel-libipsec created no ${LIBIPSEC_DEVICE}`);
    }

    // An initiator that moves to another local address (its WAN's new address, or a peer connection
    // following a WAN failover) ends its SA first: the new IKE_SA then carries INITIAL_CONTACT, so the
    // far end drops the SA it holds from the old address (swanctl's default is unique = no) instead of
    // keeping it until its DPD gives up; the DELETE from a dead WAN never arrives.
    const moving = wasRunning && !daemonChanged ? changedConns.filter((c) => c.tunnel.initiator && movedAddress(c)) : [];
    for (const c of moving) {
      const t = this.swanctl(paths, ["--terminate", "--ike", c.name, "--force", "--timeout", "1"]);
      await run(t.argv, { ...t.options, allowFailure: true });
    }

    const loadedNames = new Set([...r.conns.map((c) => c.name), ...(ra?.connNames ?? [])]);
    if (
      started ||
      changedConns.length > 0 ||
      raChanged ||
      credsRemoved ||
      removed.length > 0 ||
      !(await this.loadedMatches(ctx, paths, loadedNames))
    ) {
      // --clear when remote-access credentials are in play: a replaced certificate's old key leaves charon.
      const load = this.swanctl(paths, loadArgs(paths, ra !== null || credsRemoved));
      await run(load.argv, load.options);
    }

    // charon restarts SAs of replaced start_action=start connections itself; a
    // responder's SA would keep the old settings, so end it and let the
    // initiator (close_action = start) come back with the new ones. Only after
    // the load: the initiator comes back within milliseconds, and a responder
    // still holding the old connection narrows the new CHILD_SA's traffic
    // selectors to the old ones, where they stay (seen in the lab when a LAN
    // NAT change moved both ends' selectors).
    if (wasRunning && !daemonChanged) {
      for (const c of changedConns) {
        if (c.tunnel.initiator || !existing.includes(c.name)) continue;
        const t = this.swanctl(paths, ["--terminate", "--ike", c.name, "--force"]);
        await run(t.argv, { ...t.options, allowFailure: true });
      }
    }

    if (moving.length > 0) {
      const ids = new Set(moving.map((c) => c.tunnel.id));
      for (const t of await this.saStates(config, ctx)) {
        if (!ids.has(t.id) || t.ikeSas.length > 0) continue;
        this.initiatedAt.set(t.conn, Date.now());
        const i = this.swanctl(paths, ["--initiate", "--child", t.conn, "--timeout", "1"]);
        await run(i.argv, { ...i.options, allowFailure: true });
      }
    }

    // Routes last: the libipsec TUN exists only while charon runs.
    if (started || linkCommands.length > 0) current = await observePlumbing(ctx.runner);
    for (const c of plumbingCommands(current, desired).routes) await run(c);
    return { changed };
  }

  private async loadedMatches(ctx: DriverContext, paths: Ikev2Paths, wanted: Set<string>): Promise<boolean> {
    const l = this.swanctl(paths, ["--list-conns", "--pretty"]);
    const r = await ctx.runner.run(l.argv, { ...l.options, allowFailure: true });
    if (r.exitCode !== 0) return false;
    const loaded = parseListConns(r.stdout).filter((n) => n.startsWith(CONN_PREFIX));
    return loaded.length === wanted.size && loaded.every((n) => wanted.has(n));
  }

  private async startCharon(ctx: DriverContext, paths: Ikev2Paths): Promise<void> {
    if (paths.mode === "system") await systemctl(ctx.runner, "start", this.unit);
    else await startDaemon(ctx.runner, this.charonSpec(paths));
  }

  private async restartCharon(ctx: DriverContext, paths: Ikev2Paths): Promise<void> {
    if (paths.mode === "system") {
      await systemctl(ctx.runner, "restart", this.unit);
      return;
    }
    await stopDaemon(ctx.runner, this.charonSpec(paths));
    await startDaemon(ctx.runner, this.charonSpec(paths));
  }

  /** Stops charon, removes the driver's routes, loopbacks, XFRM interfaces and files. True when something was there. */
  private async teardown(ctx: DriverContext, paths: Ikev2Paths): Promise<boolean> {
    let changed = false;
    if (paths.mode === "standalone") {
      if (await stopDaemon(ctx.runner, this.charonSpec(paths))) changed = true;
    } else {
      for (const n of (await listNames(paths.connsDir, ".conf")).filter((x) => x.startsWith(CONN_PREFIX))) {
        if (await removePath(resolvePath(paths.connsDir, n))) changed = true;
      }
      for (const f of remoteAccessCredentialPaths(paths)) if (await removePath(f)) changed = true;
      if (await removePath(paths.strongswanConf)) changed = true;
      if (await serviceActive(ctx.runner, this.unit)) {
        await systemctl(ctx.runner, "stop", this.unit);
        changed = true;
      }
    }
    const cmds = plumbingCommands(await observePlumbing(ctx.runner), { links: [], addresses: [], routes: [] });
    for (const c of [...cmds.routes, ...cmds.links]) {
      await ctx.runner.run(c);
      changed = true;
    }
    if (await removePath(paths.dir)) changed = true;
    this.dataplane = null;
    return changed;
  }

  /** SA state per tunnel for `tern-agent status`: IKE and CHILD SA state, DH group (PFS shows on rekeyed CHILD_SAs), time to rekey. */
  async inspect(config: DeviceConfig, ctx: DriverContext): Promise<DriverDetails> {
    const states = await this.saStates(config, ctx);
    const lines = states.map((t) => {
      const ike = t.ikeSas[0];
      if (!ike) return `${t.conn} DOWN: no IKE SA`;
      const child = ike.children.find((c) => c.state === "INSTALLED") ?? ike.children[0];
      const childText = child
        ? `CHILD ${child.state} ${child.dhGroup ?? "no DH group (first CHILD_SA)"}, rekey in ${child.rekeyIn ?? "?"} s, ${child.bytesIn}/${child.bytesOut} bytes in/out`
        : "no CHILD_SA";
      return `${t.conn} ${t.up ? "up" : "DOWN"}: IKE ${ike.state} ${ike.dhGroup ?? ""} ${ike.localHost ?? "?"} → ${ike.remoteHost ?? "?"}, rekey in ${ike.rekeyIn ?? "?"} s; ${childText}`;
    });
    return { lines, data: states };
  }

  /** Rendered files (PSKs redacted), loaded connections and SAs, the dataplane in use. */
  async dump(config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]> {
    const paths = this.paths(ctx);
    const items: DumpItem[] = [
      await fileItem("strongswan.conf", paths.strongswanConf),
      await fileItem("dataplane.txt", paths.dataplaneFile),
    ];
    for (const n of (await listNames(paths.connsDir, ".conf")).filter((x) => x.startsWith(CONN_PREFIX)))
      items.push(await fileItem(n, resolvePath(paths.connsDir, n)));
    if (config.tunnels.length > 0 || (await this.running(ctx, paths))) {
      const sas = this.swanctl(paths, ["--list-sas"]);
      const conns = this.swanctl(paths, ["--list-conns"]);
      items.push(await commandItem(ctx, "swanctl-list-sas.txt", sas.argv, sas.options));
      items.push(await commandItem(ctx, "swanctl-list-conns.txt", conns.argv, conns.options));
    }
    items.push(
      await commandItem(ctx, "ip-route-proto58.json", ["ip", "-j", "-4", "route", "show", "table", "main", "proto", "58"]),
    );
    return items;
  }

  /**
   * Initiator tunnels without any IKE SA are initiated again, at most every REINITIATE_EVERY_MS each.
   * charon retries a silent peer forever (keyingtries = 0) but drops an initiation the peer answered
   * with an error: when both ends get a new tunnel at once, this end may ask before the peer has
   * loaded the connection (NO_PROPOSAL_CHOSEN) and would then stay down until the next change.
   */
  async heal(config: DeviceConfig, ctx: DriverContext): Promise<string[]> {
    const initiators = new Set(config.tunnels.filter((t) => t.initiator).map((t) => t.id));
    if (initiators.size === 0) return [];
    const paths = this.paths(ctx);
    const now = Date.now();
    const started: string[] = [];
    for (const t of await this.saStates(config, ctx)) {
      if (!initiators.has(t.id) || t.ikeSas.length > 0) continue;
      if (now - (this.initiatedAt.get(t.conn) ?? Number.NEGATIVE_INFINITY) < REINITIATE_EVERY_MS) continue;
      this.initiatedAt.set(t.conn, now);
      // --timeout: return after a second and let charon go on negotiating (and retransmitting) alone.
      const i = this.swanctl(paths, ["--initiate", "--child", t.conn, "--timeout", "1"]);
      await ctx.runner.run(i.argv, { ...i.options, allowFailure: true });
      started.push(t.conn);
    }
    return started;
  }

  /**
   * IKE and ESP leave from the address of the WAN a tunnel names (MOBIKE off):
   * when that address changes or goes, the connections must be loaded again
   * with the new one (a reconcile renders `local_addrs` from the live address;
   * charon restarts an initiator's SA from it, a responder's is ended so the
   * far end comes back). When the WAN's carrier returns, initiators without an
   * IKE SA are initiated now rather than at the next heal (up to 10 s).
   */
  async wanChanged(changes: readonly WanChange[], config: DeviceConfig, ctx: DriverContext): Promise<void> {
    // A peer connection follows its WAN's failover (local-wan.ts): when the kernel's news changes
    // where one would leave from (off its WAN, onto another, back), the reconcile renders the choice.
    let requested = false;
    if (this.ends && config.tunnels.some((t) => t.kind === "peer")) {
      for (const c of changes) this.wanStates.set(c.ifname, c.after);
      const next = localEnds(config.tunnels, wanNames(config), this.wanStates);
      const moved = config.tunnels.filter((t) => next.get(t.id)?.address !== this.ends?.get(t.id)?.address);
      if (moved.length > 0) {
        const why = changes.map(describeWanChange).join("; ");
        ctx.log.info("ikev2: peer connections follow the WAN failover", { change: why, tunnels: moved.length });
        ctx.requestReconcile?.(`${why}: peer connections follow the WAN failover`);
        requested = true;
      }
    }
    for (const c of changes) {
      const bound = config.tunnels.filter((t) => t.localInterface === c.ifname);
      if (bound.length === 0 || !c.before) continue;
      if (c.before.address !== c.after.address) {
        if (requested) continue;
        ctx.log.info("ikev2: WAN address changed, loading tunnels again", {
          change: describeWanChange(c),
          tunnels: bound.length,
        });
        ctx.requestReconcile?.(`${describeWanChange(c)}: tunnels re-keyed from the new address`);
      } else if (!c.before.carrier && c.after.carrier && c.after.address) {
        const paths = this.paths(ctx);
        const ids = new Set(bound.filter((t) => t.initiator).map((t) => t.id));
        for (const t of await this.saStates(config, ctx)) {
          if (!ids.has(t.id) || t.ikeSas.length > 0) continue;
          this.initiatedAt.set(t.conn, Date.now());
          const i = this.swanctl(paths, ["--initiate", "--child", t.conn, "--timeout", "1"]);
          await ctx.runner.run(i.argv, { ...i.options, allowFailure: true });
          ctx.log.info("ikev2: WAN carrier back, tunnel initiated", { conn: t.conn });
        }
      }
    }
  }

  /** IKE/CHILD SA state of every configured tunnel (all down when charon does not run). */
  async saStates(config: DeviceConfig, ctx: DriverContext): Promise<TunnelSaState[]> {
    const paths = this.paths(ctx);
    let text = "";
    if (config.tunnels.length > 0 && (await this.running(ctx, paths))) {
      const l = this.swanctl(paths, ["--list-sas", "--pretty"]);
      text = (await ctx.runner.run(l.argv, { ...l.options, allowFailure: true })).stdout;
    }
    return tunnelSaStates(config.tunnels, text);
  }
}

/** The driver has work: tunnels, or the remote worker VPN. */
function inUse(config: DeviceConfig): boolean {
  return config.tunnels.length > 0 || config.remoteVpn !== undefined;
}

/** The config's WAN interfaces in config order: where a peer connection fails over to. */
function wanNames(config: DeviceConfig): string[] {
  return config.interfaces.filter((i) => i.type === "WAN").map((i) => i.name);
}

function loadArgs(paths: Ikev2Paths, clear: boolean): string[] {
  return ["--load-all", "--noprompt", ...(clear ? ["--clear"] : []), "--file", paths.swanctlConf];
}

function withRemoteAccess(p: Plumbing, config: DeviceConfig, dataplane: Dataplane): Plumbing {
  const ra = remoteAccessPlumbing(config.remoteVpn, dataplane);
  return { links: [...p.links, ...ra.links], addresses: p.addresses, routes: [...p.routes, ...ra.routes] };
}

async function remoteAccessDiffers(dir: string, ra: RenderedRemoteAccess): Promise<boolean> {
  for (const f of [ra.conn.file, ...ra.credentials]) if (await differs(dir, f)) return true;
  return false;
}

function devicesOf(config: DeviceConfig, dataplane: Dataplane): string[] {
  return dataplane === "libipsec" ? [LIBIPSEC_DEVICE] : config.tunnels.map((t) => xfrmIfName(t));
}
