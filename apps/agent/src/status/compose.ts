/**
 * Builds the protocol `status` message: interfaces, BGP and VRRP from the
 * drivers' observe(), tunnels from the TunnelQualitySource, health from the
 * HealthSource, and the applied hash from the reconcile loop. A driver whose
 * observe() fails leaves its part out; the message is always valid.
 */
import { emptyDeviceConfig, Status } from "@tern/protocol";
import type { Driver, DriverContext, Logger } from "../drivers/driver.ts";
import { describeError, formatIssues } from "../errors.ts";
import type { Reconciler } from "../reconcile/index.ts";
import type { HealthSource } from "./health.ts";
import type { TunnelQualitySource } from "./tunnel-quality.ts";

export interface StatusComposerOptions {
  drivers: Driver[];
  context: DriverContext;
  reconciler: Pick<Reconciler, "appliedHash" | "applying" | "current">;
  tunnels: TunnelQualitySource;
  health: HealthSource | null;
  log: Logger;
}

export class StatusComposer {
  /** Errors from the last compose, per source (driver name, "tunnels", "health"). */
  readonly errors = new Map<string, string>();

  constructor(private readonly options: StatusComposerOptions) {}

  async compose(): Promise<Status> {
    const { drivers, context, reconciler, tunnels, health, log } = this.options;
    const config = reconciler.current ?? emptyDeviceConfig("none");
    const status: Status = {
      type: "status",
      at: new Date().toISOString(),
      appliedHash: reconciler.appliedHash,
      applying: reconciler.applying,
      tunnels: [],
      interfaces: [],
      bgp: null,
      vrrp: [],
      health: null,
    };
    this.errors.clear();
    for (const driver of drivers) {
      if (!driver.observe) continue;
      try {
        const part = await driver.observe(config, context);
        if (part.interfaces) status.interfaces.push(...part.interfaces);
        if (part.bgp !== undefined) status.bgp = part.bgp;
        if (part.vrrp) status.vrrp.push(...part.vrrp);
      } catch (err) {
        this.errors.set(driver.name, describeError(err));
      }
    }
    try {
      status.tunnels = tunnels.report();
    } catch (err) {
      this.errors.set("tunnels", describeError(err));
    }
    if (health)
      status.health = await health.read().catch((err: unknown) => {
        this.errors.set("health", describeError(err));
        return null;
      });
    for (const [source, error] of this.errors) log.warn("status part unavailable", { source, error });

    const checked = Status.safeParse(status);
    if (checked.success) return checked.data;
    // A driver reported something outside the protocol: send the rest rather than nothing.
    const problem = formatIssues(checked.error.issues);
    log.error("status failed validation; sending it without driver parts", { problem });
    this.errors.set("status", problem);
    return Status.parse({ ...status, interfaces: [], bgp: null, vrrp: [], tunnels: [] });
  }
}
