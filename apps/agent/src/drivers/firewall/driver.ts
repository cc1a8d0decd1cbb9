/** The firewall driver: filter rules and LAN 1:1 NAT in the agent's one nft table, swapped atomically. */
import { join } from "node:path";
import type { DeviceConfig } from "@tern/protocol";
import type { ApplyOutcome, Driver, DriverContext } from "../driver.ts";
import { DEFAULT_TUNNEL_DEVICES, firewallEmpty, firewallInput } from "./input.ts";
import { applyOwnedTable, scriptPath, tableScript } from "./nft-table.ts";
import { FIREWALL_TABLE, renderFirewall } from "./render.ts";

export interface FirewallDriverOptions {
  /**
   * The tunnel-side devices of `config` (names or `prefix*`), as the IKEv2
   * driver creates them. Default: `ipsec0` and `xfrm*`.
   */
  tunnelDevices?: (config: DeviceConfig) => readonly string[];
}

export class FirewallDriver implements Driver {
  readonly name = "firewall" as const;
  constructor(private readonly options: FirewallDriverOptions = {}) {}

  /** The whole nft script for `config`, or null when the section is empty (teardown). */
  render(config: DeviceConfig): string | null {
    const input = firewallInput(config, this.options.tunnelDevices?.(config) ?? DEFAULT_TUNNEL_DEVICES);
    if (firewallEmpty(input)) return null;
    return tableScript(FIREWALL_TABLE, renderFirewall(input), "firewall and LAN 1:1 NAT");
  }

  async apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    const script = this.render(config);
    const changed = await applyOwnedTable(ctx.runner, join(ctx.runDir, this.name), FIREWALL_TABLE, script);
    if (changed) ctx.log.info(script ? "firewall table applied" : "firewall table removed", { table: "inet tern" });
    return { changed };
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
