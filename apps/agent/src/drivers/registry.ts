/**
 * The one list of drivers the agent runs, wired to each other: the firewall
 * asks the IKEv2 driver which devices carry tunnel traffic (LAN 1:1 NAT
 * translates there), the policy driver reads link quality from the tunnel
 * prober, QoS reads the control server from the context. The list is sorted
 * by DRIVER_ORDER, so where a driver is added does not matter, and a driver
 * name may appear only once.
 */
import { HealingLog } from "../healing/index.ts";
import type { LinkQualityLookup } from "../probes/types.ts";
import { BgpDriver, type BgpDriverOptions } from "./bgp/index.ts";
import { DhcpDriver, type DhcpDriverOptions } from "./dhcp/index.ts";
import { DRIVER_ORDER, type Driver } from "./driver.ts";
import { FirewallDriver } from "./firewall/index.ts";
import { Ikev2Driver, type Ikev2DriverOptions } from "./ikev2/index.ts";
import { LinksDriver } from "./links/index.ts";
import { LteDriver, type LteDriverOptions } from "./lte/index.ts";
import { PolicyDriver } from "./policy/index.ts";
import { QosDriver } from "./qos/index.ts";
import { VrrpDriver, type VrrpDriverOptions } from "./vrrp/index.ts";
import { WifiDriver, type WifiDriverOptions } from "./wifi/index.ts";

export interface DriverOptions {
  /**
   * Measured link quality for the multi-link policy (the agent passes its
   * TunnelProber). Without it nothing is ever measured, so each policy rule
   * keeps its first candidate link.
   */
  quality?: LinkQualityLookup;
  ikev2?: Ikev2DriverOptions;
  bgp?: BgpDriverOptions;
  vrrp?: VrrpDriverOptions;
  dhcp?: DhcpDriverOptions;
  lte?: LteDriverOptions;
  wifi?: WifiDriverOptions;
}

/** Nothing measured: every link counts as eligible, re-evaluated once a second. */
const unmeasured: LinkQualityLookup = { quality: () => null, intervalMs: () => 1000 };

/** Every driver of this build, in DRIVER_ORDER. */
export function createDrivers(options: DriverOptions = {}): Driver[] {
  // One log of what the agent healed by itself: the IKEv2 driver repairs stuck SAs, the policy driver damps flapping links.
  const healing = new HealingLog();
  const ikev2 = new Ikev2Driver({ ...(options.quality ? { quality: options.quality, healing } : {}), ...options.ikev2 });
  const lte = new LteDriver(options.lte);
  const wifi = new WifiDriver(options.wifi);
  return orderDrivers([
    // The links driver reports each interface; the LTE driver adds its modem's state.
    new LinksDriver({ lte }),
    lte,
    wifi,
    new FirewallDriver({ tunnelDevices: ikev2 }),
    ikev2,
    new BgpDriver(options.bgp),
    new VrrpDriver(options.vrrp),
    // A restarted access point resets its interface: the DHCP server serving it restarts too.
    new DhcpDriver({ ...options.dhcp, interfaceResets: wifi }),
    new PolicyDriver({ quality: options.quality ?? unmeasured, healing }),
    new QosDriver(),
  ]);
}

/** Sorts drivers by DRIVER_ORDER; throws on a duplicate name. */
export function orderDrivers(drivers: Driver[]): Driver[] {
  const names = new Set<string>();
  for (const d of drivers) {
    if (names.has(d.name)) throw new Error(`driver ${d.name} registered twice`);
    names.add(d.name);
  }
  return [...drivers].sort((a, b) => DRIVER_ORDER.indexOf(a.name) - DRIVER_ORDER.indexOf(b.name));
}
