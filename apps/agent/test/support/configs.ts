/** Config builders for tests: a valid DeviceConfig from a few fields, checked against the protocol schema. */
import { readFileSync } from "node:fs";
import { type ConfigInterface, type ConfigRoute, DeviceConfig, emptyDeviceConfig } from "@tern/protocol";

export const DEVICE_ID = "00000000-0000-4000-8000-000000000001";

export function iface(name: string, fields: Partial<ConfigInterface> = {}): ConfigInterface {
  return {
    devId: `mac:02:00:00:00:00:${name.length.toString(16).padStart(2, "0")}`,
    name,
    type: "LAN",
    dhcp: false,
    address: null,
    gateway: null,
    metric: 0,
    mtu: 1500,
    pathLabels: [],
    ...fields,
  };
}

export function route(destination: string, gateway: string, fields: Partial<ConfigRoute> = {}): ConfigRoute {
  return { destination, gateway, ifname: null, metric: 0, ...fields };
}

export function linksConfig(
  interfaces: ConfigInterface[],
  routes: ConfigRoute[] = [],
  extra: Partial<DeviceConfig> = {},
): DeviceConfig {
  return DeviceConfig.parse({ ...emptyDeviceConfig(DEVICE_ID), interfaces, routes, ...extra });
}

/** A fixture of packages/protocol/fixtures/v1. */
export function fixture(schema: string, name: string): unknown {
  const url = new URL(`../../../../packages/protocol/fixtures/v1/${schema}/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8"));
}
