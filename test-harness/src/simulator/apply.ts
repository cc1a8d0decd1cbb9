/** What a simulated device answers to `apply`: per-driver results and the hash now applied. */
import type { ApplyResult, DeviceConfig, DriverResult } from "@tern/protocol";
import { configHash } from "@tern/protocol";

/** The agent's drivers in the order its reconcile loop runs them (apps/agent DRIVER_ORDER). */
export const SIM_DRIVERS = ["links", "firewall", "ikev2", "bgp", "vrrp", "dhcp", "policy", "qos"] as const;

/**
 * The result of applying `config` on a device that had `previousHash`.
 * With `failDriver`, drivers before it succeed, it fails, the rest do not
 * run and the device rolls back to `previousHash`, as the agent does.
 */
export function simulateApply(
  id: string,
  config: DeviceConfig,
  previousHash: string | null,
  failDriver: string | null,
): ApplyResult {
  const hash = configHash(config);
  const drivers: DriverResult[] = [];
  for (const driver of SIM_DRIVERS) {
    if (driver === failDriver) {
      drivers.push({ driver, ok: false, changed: false, durationMs: 1, error: `${driver}: simulated failure` });
      return {
        type: "apply-result",
        id,
        ok: false,
        appliedHash: previousHash,
        rolledBack: true,
        drivers,
        error: `${driver} failed`,
      };
    }
    drivers.push({ driver, ok: true, changed: previousHash !== hash, durationMs: 1 });
  }
  if (failDriver !== null && !(SIM_DRIVERS as readonly string[]).includes(failDriver)) {
    throw new RangeError(`unknown driver "${failDriver}"; drivers are ${SIM_DRIVERS.join(", ")}`);
  }
  return { type: "apply-result", id, ok: true, appliedHash: hash, rolledBack: false, drivers };
}
