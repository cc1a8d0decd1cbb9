/**
 * The device's registration: server URL, device id, the device token and how
 * to reach the server (`device.json`, 0600). The token only selects the
 * device; the device key (device-key.ts) proves it is this device.
 */
import { readFile } from "node:fs/promises";
import * as z from "zod";
import { AgentError } from "../errors.ts";
import { writeFileAtomic } from "../fs.ts";

export const DeviceCredentials = z.object({
  server: z.url(),
  deviceId: z.string().min(1),
  deviceToken: z.string().min(1),
  machineId: z.string(),
  isApproved: z.boolean(),
  registeredAt: z.string(),
  /** A CA certificate file (PEM) the server's certificate must chain to, instead of the system's trust store. */
  caFile: z.string().min(1).optional(),
  /** The operator allowed an unencrypted (http/ws) server that is not on this host (`--insecure`). */
  insecure: z.boolean().optional(),
});
export type DeviceCredentials = z.infer<typeof DeviceCredentials>;

export async function loadCredentials(path: string): Promise<DeviceCredentials | null> {
  const text = await readFile(path, "utf8").catch(() => null);
  if (text === null) return null;
  const parsed = DeviceCredentials.safeParse(JSON.parse(text));
  if (!parsed.success) throw new AgentError("NOT_REGISTERED", `${path} is damaged; register again`);
  return parsed.data;
}

export async function saveCredentials(path: string, credentials: DeviceCredentials): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(credentials, null, 2)}\n`, 0o600);
}
