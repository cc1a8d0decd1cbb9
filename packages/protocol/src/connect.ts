/** Device onboarding: `POST /connect/register` with a registration token. */
import { z } from "zod";
import { IfName, IPv4 } from "./common.ts";
import { InterfaceDeviceType } from "./device.ts";

export const RegisterInterface = z.object({
  devId: z.string().min(1).max(200),
  name: IfName,
  mac: z.string().max(17).default(""),
  deviceType: InterfaceDeviceType.default("ethernet"),
  IPv4: IPv4.or(z.literal("")).default(""),
  IPv4Mask: z.number().int().min(0).max(32).nullable().default(null),
  gateway: IPv4.or(z.literal("")).default(""),
  dhcp: z.boolean().default(false),
});
export type RegisterInterface = z.infer<typeof RegisterInterface>;

export const RegisterRequest = z.object({
  token: z.string().min(1).max(500),
  machineId: z.string().regex(/^[A-Za-z0-9._:-]{8,200}$/, "must be 8–200 characters [A-Za-z0-9._:-]"),
  hostname: z.string().min(1).max(253),
  interfaces: z.array(RegisterInterface).max(64),
  versions: z.object({ agent: z.string().max(50), protocol: z.number().int() }),
});
export type RegisterRequest = z.infer<typeof RegisterRequest>;

export const RegisterResponse = z.object({
  deviceId: z.string(),
  /** Secret the device presents on its websocket; shown once per registration. */
  deviceToken: z.string(),
  isApproved: z.boolean(),
});
export type RegisterResponse = z.infer<typeof RegisterResponse>;
