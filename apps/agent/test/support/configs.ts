/**
 * Device configs for tests: the protocol's own fixtures, variants of them,
 * and small builders (checked against the protocol schema, except the lab
 * builders at the end, which namespace tests use to probe faster than the
 * schema allows).
 */
import { readFileSync } from "node:fs";
import {
  type ConfigInterface,
  type ConfigRoute,
  type ConfigTunnel,
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

/** An empty config with `patch` applied (sections given replace the empty ones); not schema-checked. */
export function configWith(patch: Partial<DeviceConfig>): DeviceConfig {
  return { ...emptyDeviceConfig(DEVICE_ID), ...patch };
}

/** A device tunnel with sensible defaults (not schema-checked). */
export function tunnel(
  over: Partial<ConfigTunnel> & Pick<ConfigTunnel, "id" | "localLoopback" | "remoteLoopback">,
): ConfigTunnel {
  return {
    num: 1,
    kind: "device",
    localInterface: "wan0",
    localAddress: null,
    remoteAddress: "192.0.2.1",
    ike: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 28800 },
    esp: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 3600, pfs: true },
    auth: { psk: "x", localId: "a", remoteId: "b" },
    initiator: true,
    dpdSeconds: 10,
    localSubnets: [],
    remoteSubnets: [],
    probeTargets: [over.remoteLoopback],
    pathLabel: null,
    ...over,
  };
}

/** A static WAN interface. */
export function wan(name: string, address: string, gateway: string, pathLabels: string[] = []): ConfigInterface {
  return { devId: `dev:${name}`, name, type: "WAN", dhcp: false, address, gateway, metric: 0, mtu: 1500, pathLabels };
}

/** A copy of the empty config changed by `edit` (not schema-checked). */
export function labConfig(edit: (c: DeviceConfig) => void): DeviceConfig {
  const c = structuredClone(emptyConfig());
  edit(c);
  return c;
}
