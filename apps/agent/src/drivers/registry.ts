/**
 * The one list of drivers the agent runs. To add a driver: construct it in
 * `createDrivers` below; the list is sorted by DRIVER_ORDER, so where it is
 * added does not matter, and a driver name may appear only once.
 */
import { DRIVER_ORDER, type Driver } from "./driver.ts";
import { LinksDriver, type LinksDriverOptions } from "./links/index.ts";

export interface DriverOptions {
  links?: LinksDriverOptions;
}

/** Every driver of this build, in DRIVER_ORDER. */
export function createDrivers(options: DriverOptions = {}): Driver[] {
  return orderDrivers([
    new LinksDriver(options.links),
    // firewall, ikev2, bgp, vrrp, dhcp, policy, qos: added here as they land.
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
