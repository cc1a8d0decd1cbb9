/** Shared bits of the simulator tests: fixtures from the protocol package. */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { DeviceConfig } from "@tern/protocol";

const require = createRequire(import.meta.url);

export function fixture(path: string): unknown {
  return JSON.parse(readFileSync(require.resolve(`@tern/protocol/fixtures/v1/${path}`), "utf8"));
}

/** The protocol's full DeviceConfig sample addressed to `deviceId`. */
export function fullConfig(deviceId: string): DeviceConfig {
  return DeviceConfig.parse({ ...(fixture("DeviceConfig/valid-full.json") as object), deviceId });
}

export const TOKEN = "sim-registration-token";
