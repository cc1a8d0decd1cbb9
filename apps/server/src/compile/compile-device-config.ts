/**
 * The compile step: a pure function from one device's domain objects to the
 * protocol's `DeviceConfig`, so the server and the agent agree on what the
 * device should run. Output is deterministic (sets are sorted), so its hash
 * only changes when the desired state does.
 */
import {
  type ConfigHealing,
  type ConfigMonitoring,
  canonicalJson,
  canonicalJsonHash,
  DEFAULT_MONITORING,
  DeviceConfig,
  issuesToDetails,
} from "@tern/protocol";
import { compileBgp } from "./bgp.ts";
import { createContext } from "./context.ts";
import { compileDhcp } from "./dhcp.ts";
import { compileFirewall } from "./firewall.ts";
import type { CompileInput, CompileWarning } from "./input.ts";
import { compileInterfaces } from "./interfaces.ts";
import { compilePolicy } from "./policy.ts";
import { compileRoutes } from "./routes.ts";
import { compileTunnels } from "./tunnels.ts";
import { compileVrrp } from "./vrrp.ts";

export interface CompileResult {
  config: DeviceConfig;
  /** `configHash(config)`: the job's target hash. */
  hash: string;
  /** The config's canonical JSON, the text `hash` is taken of: what is stored (sealed) and sent. */
  json: string;
  /** Parts of the input left out of the config and why (never fatal). */
  warnings: CompileWarning[];
}

/** The compiled config failed the protocol schema: a bug, or input that skipped validation. */
export class CompileError extends Error {
  constructor(
    message: string,
    readonly details: { path: string; message: string }[],
  ) {
    super(message);
    this.name = "CompileError";
  }
}

/**
 * The healing section, left out at its defaults (mode `act`, nothing to
 * avoid): configs of organizations that never touched healing keep the hash
 * they had before it existed, so no device is re-applied for it.
 */
function compileHealing(h: ConfigHealing | undefined): Pick<DeviceConfig, "healing"> {
  if (!h || (h.mode === "act" && h.avoid.length === 0)) return {};
  return { healing: { mode: h.mode, avoid: [...new Set(h.avoid)].sort() } };
}

/**
 * Compiles the desired config of `input.device`. Never throws for inconsistent
 * references (they become warnings and the part is left out); throws
 * `CompileError` only when the result would not pass the protocol schema.
 */
export function compileDeviceConfig(input: CompileInput): CompileResult {
  const warnings: CompileWarning[] = [];
  const ctx = createContext(input, warnings);
  const tunnels = compileTunnels(ctx);
  const monitoring: ConfigMonitoring = { ...DEFAULT_MONITORING, ...input.monitoring };
  const config: DeviceConfig = {
    deviceId: input.device.id,
    interfaces: compileInterfaces(ctx),
    routes: compileRoutes(ctx),
    dhcp: compileDhcp(ctx),
    bgp: compileBgp(ctx, tunnels),
    firewall: compileFirewall(ctx),
    tunnels,
    vrrp: compileVrrp(ctx),
    // Marks the peer-action tunnels `internet` (same objects as `tunnels` above); warnings keep their order.
    policy: compilePolicy(ctx, tunnels),
    monitoring,
    qos: { prioritizeManagement: input.prioritizeManagement ?? true },
    ...compileHealing(input.healing),
    // Only when present: configs of devices without the application keep their hash.
    ...(input.remoteVpn ? { remoteVpn: input.remoteVpn } : {}),
  };
  // The agent parses `apply` with the same schema: refuse here, with the reason, rather than send what it would refuse.
  const parsed = DeviceConfig.safeParse(config);
  if (!parsed.success) {
    const details = issuesToDetails(parsed.error.issues);
    throw new CompileError(
      `compiled config of device ${input.device.id} is invalid: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}`,
      details,
    );
  }
  const json = canonicalJson(config);
  return { config, hash: canonicalJsonHash(json), json, warnings };
}
