/**
 * LTE driver: cellular modems through ModemManager (`mmcli`). For each
 * interface whose config carries `lte`, it finds the modem whose network
 * port is that interface, unlocks the SIM with the configured PIN, enables
 * the modem, turns on extended signal reporting, and connects with
 * `--simple-connect` (APN, IP type, authentication, roaming). When the
 * bearer's IPv4 method is `static` (QMI/MBIM raw-IP modems) it puts the
 * bearer's address on the interface; with `dhcp` the interface's DHCP client
 * (links driver) takes it. A modem it connected whose interface no longer
 * has `lte` is disconnected.
 *
 * Idempotent: a connected modem whose settings fingerprint matches the one
 * recorded at connect time is left alone. A PIN the SIM refused is never
 * tried again with the same value, and the driver never spends the last PIN
 * try, so a wrong PIN cannot lock the SIM into PUK.
 */
import { readFile, rm } from "node:fs/promises";
import type { ConfigInterface, ConfigLte, DeviceConfig, LteStatus } from "@tern/protocol";
import { listNames } from "../../daemons/files.ts";
import { interfaceAddresses } from "../../daemons/interfaces.ts";
import { AgentError, invalidConfig } from "../../errors.ts";
import { writeFileAtomic } from "../../fs.ts";
import { CommandError } from "../../runner.ts";
import type { ApplyOutcome, Driver, DriverContext, DumpItem, RenderedFile } from "../driver.ts";
import { connectFingerprint, redactMmcli, simpleConnectArg, unlockRetries } from "./connect.ts";
import { type BearerInfo, known, Mmcli, type ModemInfo } from "./mmcli.ts";
import { CONNECTED_SUFFIX, connectedFile, lteDir } from "./paths.ts";
import { lteStatus } from "./status.ts";

export interface LteDriverOptions {
  /** The mmcli program (default: `mmcli` from PATH). */
  mmcli?: string;
  /** How long `--simple-connect` may take (registration included); default 120 s. */
  connectTimeoutMs?: number;
}

/** Reads a modem's status for the links driver's interface status. */
export interface LteStatusReader {
  lteStatus(ifname: string, ctx: DriverContext): Promise<LteStatus | null>;
}

type LteInterface = ConfigInterface & { lte: ConfigLte };

const lteInterfaces = (config: DeviceConfig): LteInterface[] =>
  config.interfaces.filter((i): i is LteInterface => i.lte !== undefined);

export class LteDriver implements Driver, LteStatusReader {
  readonly name = "lte" as const;
  /** PINs a SIM refused, by interface: never tried again until the config brings another. */
  private readonly refusedPins = new Map<string, string>();

  constructor(private readonly options: LteDriverOptions = {}) {}

  private mmcli(ctx: Pick<DriverContext, "runner">): Mmcli {
    return new Mmcli(ctx.runner, this.options.mmcli ?? "mmcli");
  }

  plan(config: DeviceConfig): { files: RenderedFile[]; commands: string[][] } {
    const commands = lteInterfaces(config).map((i) => [
      "mmcli",
      "-m",
      `<modem with port ${i.name}>`,
      redactMmcli(simpleConnectArg(i.lte)),
    ]);
    return { files: [], commands };
  }

  async apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    const mm = this.mmcli(ctx);
    let changed = false;
    const wanted = lteInterfaces(config);
    for (const name of await listNames(lteDir(ctx.runDir), CONNECTED_SUFFIX)) {
      const ifname = name.slice(0, -CONNECTED_SUFFIX.length);
      if (wanted.some((i) => i.name === ifname)) continue;
      if (await this.disconnect(mm, ifname, ctx)) changed = true;
      await rm(connectedFile(ctx.runDir, ifname), { force: true });
    }
    for (const iface of wanted) if (await this.bringUp(mm, iface, ctx)) changed = true;
    return { changed };
  }

  /** Unlock, enable, connect; true when anything was changed. */
  private async bringUp(mm: Mmcli, iface: LteInterface, ctx: DriverContext): Promise<boolean> {
    let info = await mm.modemFor(iface.name);
    if (!info) throw new AgentError("LINK_NOT_FOUND", `no modem has network port ${iface.name} (mmcli -L)`);
    const path = info.modem["dbus-path"];
    let changed = false;
    const g = () => (info as ModemInfo).modem.generic;

    if (g()["state-failed-reason"] === "sim-missing")
      throw new AgentError("DRIVER_FAILED", `${iface.name}: the modem has no SIM card`);
    const lock = known(g()["unlock-required"]);
    if (lock === "sim-pin") {
      await this.unlock(mm, iface, info, ctx);
      changed = true;
      info = await mm.modem(path);
    } else if (lock !== null && lock !== "none") {
      throw new AgentError("DRIVER_FAILED", `${iface.name}: the SIM asks for ${lock}; Tern only enters the SIM PIN`);
    }
    if (g().state === "failed")
      throw new AgentError(
        "DRIVER_FAILED",
        `${iface.name}: the modem failed (${g()["state-failed-reason"] ?? "no reason given"})`,
      );
    if (g().state === "disabled") {
      await mm.act(["-m", path, "-e"]);
      changed = true;
    }
    const signal = await mm.signal(path).catch(() => null);
    if ((known(signal?.modem.signal.refresh?.rate) ?? "0") === "0") await mm.act(["-m", path, "--signal-setup=30"]);

    const fingerprint = connectFingerprint(iface.lte);
    const recorded = await readFile(connectedFile(ctx.runDir, iface.name), "utf8").catch(() => null);
    const connected = (await mm.modem(path)).modem.generic.state === "connected";
    if (!connected || recorded?.trim() !== fingerprint) {
      if (connected) await mm.act(["-m", path, "--simple-disconnect"]);
      try {
        await mm.act(["-m", path, simpleConnectArg(iface.lte)], this.options.connectTimeoutMs ?? 120_000);
      } catch (err) {
        // The argv carries the APN password: keep it out of errors and logs.
        const why = err instanceof CommandError ? redactMmcli(err.message) : String(err);
        throw new AgentError("DRIVER_FAILED", `${iface.name}: connecting to APN ${iface.lte.apn} failed: ${why}`);
      }
      await writeFileAtomic(connectedFile(ctx.runDir, iface.name), `${fingerprint}\n`, 0o600);
      ctx.log.info("lte: connected", { interface: iface.name, apn: iface.lte.apn, modem: path });
      changed = true;
    }
    if (await this.configureBearerAddress(mm, path, iface, ctx)) changed = true;
    return changed;
  }

  private async unlock(mm: Mmcli, iface: LteInterface, info: ModemInfo, ctx: DriverContext): Promise<void> {
    const at = `interfaces.${iface.name}.lte.pin`;
    const pin = iface.lte.pin;
    if (!pin) throw invalidConfig(at, `the SIM of ${iface.name} is PIN-locked: set the interface's SIM PIN`);
    if (this.refusedPins.get(iface.name) === pin)
      throw invalidConfig(at, `the SIM of ${iface.name} refused this PIN before; set the right one`);
    const left = unlockRetries(info.modem.generic["unlock-retries"], "sim-pin");
    if (left !== null && left < 2)
      throw invalidConfig(
        at,
        `the SIM of ${iface.name} has ${left} PIN try left; enter it by hand so the SIM does not lock (PUK)`,
      );
    const sim = known(info.modem.generic.sim);
    if (!sim) throw new AgentError("DRIVER_FAILED", `${iface.name}: the modem reports no SIM to unlock`);
    try {
      await mm.act(["-i", sim, `--pin=${pin}`]);
    } catch (err) {
      this.refusedPins.set(iface.name, pin);
      const why = err instanceof CommandError ? redactMmcli(err.message) : String(err);
      throw invalidConfig(at, `the SIM of ${iface.name} refused the PIN: ${why}`);
    }
    this.refusedPins.delete(iface.name);
    ctx.log.info("lte: SIM unlocked", { interface: iface.name });
  }

  /** The connected bearer of the modem, or null. */
  private async connectedBearer(mm: Mmcli, info: ModemInfo): Promise<BearerInfo | null> {
    for (const b of info.modem.generic.bearers ?? []) {
      const bearer = await mm.bearer(b).catch(() => null);
      if (bearer?.bearer.status.connected === "yes") return bearer;
    }
    return null;
  }

  /** With a `static` bearer: the bearer's address on the interface and the link up. */
  private async configureBearerAddress(mm: Mmcli, path: string, iface: LteInterface, ctx: DriverContext): Promise<boolean> {
    const bearer = await this.connectedBearer(mm, await mm.modem(path));
    const ipv4 = bearer?.bearer["ipv4-config"];
    if (!ipv4 || known(ipv4.method) !== "static") return false;
    const address = known(ipv4.address);
    const prefix = known(ipv4.prefix);
    if (!address || !prefix) return false;
    const cidr = `${address}/${prefix}`;
    if ((await interfaceAddresses(ctx.runner, iface.name)).includes(cidr)) return false;
    await ctx.runner.run(["ip", "link", "set", "dev", iface.name, "up"]);
    await ctx.runner.run(["ip", "addr", "replace", cidr, "dev", iface.name]);
    return true;
  }

  /** Disconnects the modem of `ifname` if it is connected; true when it was. */
  private async disconnect(mm: Mmcli, ifname: string, ctx: DriverContext): Promise<boolean> {
    const info = await mm.modemFor(ifname).catch(() => null);
    if (!info) return false;
    if (info.modem.generic.state !== "connected") return false;
    await mm.act(["-m", info.modem["dbus-path"], "--simple-disconnect"]);
    ctx.log.info("lte: disconnected", { interface: ifname });
    return true;
  }

  /**
   * Between applies: a modem this driver connected that is registered but no
   * longer connected (the network dropped the bearer; ModemManager does not
   * reconnect by itself) gets a reconcile, whose apply connects it again.
   * Only from `registered`, so a modem without network is not hammered.
   */
  async heal(config: DeviceConfig, ctx: DriverContext): Promise<string[]> {
    const done: string[] = [];
    for (const iface of lteInterfaces(config)) {
      const recorded = await readFile(connectedFile(ctx.runDir, iface.name), "utf8").catch(() => null);
      if (recorded === null) continue;
      const info = await this.mmcli(ctx)
        .modemFor(iface.name)
        .catch(() => null);
      if (info?.modem.generic.state !== "registered") continue;
      done.push(`lte: ${iface.name} lost its data connection; reconnecting`);
      ctx.requestReconcile?.(`lte: ${iface.name} disconnected`);
    }
    return done;
  }

  async lteStatus(ifname: string, ctx: DriverContext): Promise<LteStatus | null> {
    const mm = this.mmcli(ctx);
    const info = await mm.modemFor(ifname);
    if (!info) return null;
    const path = info.modem["dbus-path"];
    const simPath = known(info.modem.generic.sim);
    return lteStatus({
      info,
      signal: await mm.signal(path).catch(() => null),
      sim: simPath ? await mm.sim(simPath).catch(() => null) : null,
      bearer: await this.connectedBearer(mm, info),
    });
  }

  async inspect(config: DeviceConfig, ctx: DriverContext) {
    const data: Record<string, LteStatus | string | null> = {};
    const lines: string[] = [];
    for (const i of lteInterfaces(config)) {
      const s = await this.lteStatus(i.name, ctx).catch((e: unknown) => String(e));
      data[i.name] = s;
      lines.push(
        typeof s === "string" || s === null
          ? `${i.name}: ${s ?? "no modem"}`
          : `${i.name}: ${s.modemState ?? "?"} ${s.registration ?? ""} ${s.operator} ${s.accessTechnology} rsrp ${s.signal.rsrpDbm ?? "?"}`,
      );
    }
    return { lines, data };
  }

  async dump(config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]> {
    const items: DumpItem[] = [];
    const run = async (name: string, args: string[]) => {
      const r = await ctx.runner
        .run([this.options.mmcli ?? "mmcli", ...args], { allowFailure: true, timeoutMs: 15_000 })
        .catch((e: unknown) => ({ exitCode: -1, stdout: "", stderr: String(e) }));
      items.push({ name, content: redactMmcli(`${r.stdout}${r.exitCode === 0 ? "" : `exit ${r.exitCode}\n${r.stderr}`}`) });
    };
    await run("mmcli-list.txt", ["-L"]);
    for (const i of lteInterfaces(config)) {
      const info = await this.mmcli(ctx)
        .modemFor(i.name)
        .catch(() => null);
      if (info) {
        await run(`mmcli-modem-${i.name}.txt`, ["-m", info.modem["dbus-path"]]);
        await run(`mmcli-signal-${i.name}.txt`, ["-m", info.modem["dbus-path"], "--signal-get"]);
      }
    }
    return items;
  }
}
