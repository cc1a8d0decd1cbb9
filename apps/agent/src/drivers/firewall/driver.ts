/** The firewall driver: filter rules and LAN 1:1 NAT in the agent's one nft table, swapped atomically. */
import { join } from "node:path";
import type { DeviceConfig } from "@tern/protocol";
import type { ApplyOutcome, Driver, DriverContext, DumpItem } from "../driver.ts";
import { commandItem } from "../dump.ts";
import { DEFAULT_TUNNEL_DEVICES, firewallEmpty, firewallInput, type TunnelDeviceSource } from "./input.ts";
import { applyOwnedTable, scriptPath, tableScript } from "./nft-table.ts";
import { FIREWALL_TABLE, renderFirewall } from "./render.ts";

export interface FirewallDriverOptions {
  /**
   * The tunnel-side devices of `config`, as the IKEv2 driver creates them
   * (createDrivers passes the IKEv2 driver). Without one: `ipsec0` and `xfrm*`.
   */
  tunnelDevices?: TunnelDeviceSource;
}

export class FirewallDriver implements Driver {
  readonly name = "firewall" as const;
  constructor(private readonly options: FirewallDriverOptions = {}) {}

  /**
   * The whole nft script for `config`, or null when the section is empty
   * (teardown). `tunnelDevices` defaults to what is known without running
   * anything.
   */
  render(config: DeviceConfig, tunnelDevices?: readonly string[]): string | null {
    const devices = tunnelDevices ?? this.options.tunnelDevices?.plannedTunnelDevices(config) ?? DEFAULT_TUNNEL_DEVICES;
    const input = firewallInput(config, devices);
    if (firewallEmpty(input)) return null;
    return tableScript(FIREWALL_TABLE, renderFirewall(input), "firewall and LAN 1:1 NAT");
  }

  async apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    const devices = await this.options.tunnelDevices?.tunnelDevices(config, ctx);
    const script = this.render(config, devices);
    const changed = await applyOwnedTable(ctx.runner, join(ctx.runDir, this.name), FIREWALL_TABLE, script);
    if (changed) ctx.log.info(script ? "firewall table applied" : "firewall table removed", { table: "inet tern" });
    return { changed };
  }

  /** The agent's table as the kernel has it, with counters, and the NAT bindings conntrack holds. */
  async dump(_config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]> {
    return [
      await commandItem(ctx, "nft-table-tern.txt", ["nft", "-a", "list", "table", FIREWALL_TABLE.family, FIREWALL_TABLE.name]),
      await commandItem(ctx, "conntrack-nat.txt", ["conntrack", "-L", "-n"]),
    ];
  }

  plan(config: DeviceConfig, ctx: Pick<DriverContext, "mode" | "runDir" | "stateDir">) {
    const script = this.render(config);
    const path = scriptPath(join(ctx.runDir, this.name), FIREWALL_TABLE);
    if (script === null) return { files: [], commands: [] };
    return {
      files: [{ path: ctx.mode === "standalone" ? "tern.nft" : path, content: script, mode: 0o644 }],
      commands: [["nft", "-f", path]],
    };
  }
}
