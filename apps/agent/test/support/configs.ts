/** Device configs for tests: the protocol's own fixtures and small builders, checked against the protocol schema. */
import { readFileSync } from "node:fs";
import {
  type ConfigInterface,
  type ConfigRoute,
  DeviceConfig,
  DeviceConfig as DeviceConfigSchema,
  emptyDeviceConfig,
} from "@tern/protocol";

export const DEVICE_ID = "00000000-0000-4000-8000-000000000001";

/** A fixture of packages/protocol/fixtures/v1. */
export function fixture(schema: string, name: string): unknown {
  const url = new URL(`../../../../packages/protocol/fixtures/v1/${schema}/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8"));
}

/** The protocol's valid-full.json sample, parsed. */
export function fullConfig(): DeviceConfig {
  return DeviceConfigSchema.parse(fixture("DeviceConfig", "valid-full"));
}

export function emptyConfig(): DeviceConfig {
  return emptyDeviceConfig(fullConfig().deviceId);
}

/** A deep copy of `base` changed by `edit`. */
export function variant(base: DeviceConfig, edit: (c: DeviceConfig) => void): DeviceConfig {
  const copy = structuredClone(base);
  edit(copy);
  return DeviceConfigSchema.parse(copy);
}

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
