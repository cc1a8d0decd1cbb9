/** Device configs for driver tests, built from the protocol's own fixtures. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type DeviceConfig, DeviceConfig as DeviceConfigSchema, emptyDeviceConfig } from "@tern/protocol";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../../../packages/protocol/fixtures/v1/DeviceConfig/${name}`, import.meta.url));

/** The protocol's valid-full.json sample, parsed. */
export function fullConfig(): DeviceConfig {
  return DeviceConfigSchema.parse(JSON.parse(readFileSync(fixture("valid-full.json"), "utf8")));
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
