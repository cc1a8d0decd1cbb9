/** DeviceConfig builders for driver tests, starting from the protocol's own samples. */
import { readFileSync } from "node:fs";
import { DeviceConfig, emptyDeviceConfig } from "@tern/protocol";

const FIXTURES = new URL("../../../../../packages/protocol/fixtures/v1/DeviceConfig/", import.meta.url);

/** The protocol's full sample config (valid-full.json), parsed. */
export function fullConfig(): DeviceConfig {
  return DeviceConfig.parse(JSON.parse(readFileSync(new URL("valid-full.json", FIXTURES), "utf8")));
}

/** An empty config with `patch` applied (sections given replace the empty ones). */
export function configWith(patch: Partial<DeviceConfig>): DeviceConfig {
  return { ...emptyDeviceConfig("00000000-0000-4000-8000-000000000001"), ...patch };
}
