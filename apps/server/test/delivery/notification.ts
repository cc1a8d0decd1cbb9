/** The protocol's notification fixture, parsed, with optional overrides. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Notification } from "@tern/protocol";

const path = join(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "..",
  "packages",
  "protocol",
  "fixtures",
  "v1",
  "Notification",
  "valid-tunnel-drop.json",
);

export function notification(overrides: Partial<Notification> = {}): Notification {
  return Notification.parse({ ...JSON.parse(readFileSync(path, "utf8")), ...overrides });
}
