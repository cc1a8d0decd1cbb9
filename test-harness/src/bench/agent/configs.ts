/**
 * Full DeviceConfigs for the two routers of the agent lab, from the
 * protocol's valid-full.json sample (interfaces, a static route, DHCP, eBGP
 * multihop, inbound firewall and LAN 1:1 NAT, two IKEv2 tunnels, VRRP, a
 * link-quality policy, management QoS), fitted to the lab as the agent's own
 * end-to-end test does. Router A keeps both tunnels: the device tunnel to
 * router B and the peer tunnel, whose far end is not in the lab (charon keeps
 * trying it, as it would for a peer that is down).
 */
import { readFileSync } from "node:fs";
import { DeviceConfig } from "@tern/protocol";
import type { LabRouter } from "./lab.ts";

export const DEVICE_TUNNEL_ID = "00000000-0000-4000-8000-000000000301";
/** The tunnel loopbacks of router A and router B (a ping between them crosses the IKEv2 tunnel). */
export const TUNNEL_LOOPBACKS = { a: "10.100.0.4", b: "10.100.0.5" } as const;

function fullSample(): DeviceConfig {
  const url = new URL("../../../../packages/protocol/fixtures/v1/DeviceConfig/valid-full.json", import.meta.url);
  return DeviceConfig.parse(JSON.parse(readFileSync(url, "utf8")));
}

const monitoring = { probeIntervalMs: 500, windowSize: 20, downAfterMs: 3000, statusIntervalMs: 1000 };

export function routerAConfig(deviceId: string, r: LabRouter): DeviceConfig {
  const c = fullSample();
  c.deviceId = deviceId;
  c.interfaces = c.interfaces.map((i) => ({ ...i, devId: `mac:${r.macs[i.name]}` }));
  c.monitoring = monitoring;
  return DeviceConfig.parse(c);
}

/** Router B: the far end of the device tunnel, the same as in the agent's end-to-end test. */
export { routerBConfig } from "../../../../apps/agent/test/support/edge-configs.ts";

/**
 * The one-field change: the port of router A's inbound firewall rule
 * (22 → 2222). It touches one driver's output (the nft ruleset), so its
 * raw-command baseline is a single `nft -f` of the new ruleset.
 */
export function oneFieldChange(c: DeviceConfig): DeviceConfig {
  const copy = structuredClone(c);
  const rule = copy.firewall.inbound[0];
  if (!rule) throw new Error("the config has no inbound firewall rule to change");
  rule.ports = rule.ports === "2222" ? "22" : "2222";
  return DeviceConfig.parse(copy);
}
