/** VRRP groups (6.3.1 high availability): a virtual IP shared by LAN interfaces of several devices. */
import * as z from "zod";
import { Id, IPv4, Name, Timestamp } from "./common.ts";
import { VrrpRouterState } from "./device-status.ts";

export const VrrpMember = z.object({
  device: Id,
  /** The LAN interface's devId on that device. */
  interface: z.string().min(1),
  priority: z.number().int().min(1).max(255).default(100),
  /** Interfaces (devIds) whose failure lowers priority. */
  trackInterfacesOptional: z.array(z.string()).max(16).default([]),
  /** Interfaces (devIds) whose failure makes this router give up mastership. */
  trackInterfacesMandatory: z.array(z.string()).max(16).default([]),
});
export type VrrpMember = z.infer<typeof VrrpMember>;

export const VrrpGroupCreate = z
  .object({
    name: Name,
    virtualRouterId: z.number().int().min(1).max(255),
    virtualIp: IPv4,
    preemption: z.boolean().default(true),
    acceptMode: z.boolean().default(false),
    /** Advertisement interval in ms; 100 gives sub-second failover. */
    advertIntervalMs: z.number().int().min(10).max(40950).multipleOf(10).default(1000),
    devices: z.array(VrrpMember).min(1).max(8),
  })
  .superRefine((g, ctx) => {
    const seen = new Set<string>();
    g.devices.forEach((d, i) => {
      if (seen.has(d.device))
        ctx.addIssue({ code: "custom", path: ["devices", i, "device"], message: "a device can be in a group once" });
      seen.add(d.device);
    });
  });
export type VrrpGroupCreate = z.infer<typeof VrrpGroupCreate>;

export const VrrpGroup = z.object({
  id: Id,
  org: Id,
  name: z.string(),
  virtualRouterId: z.number().int(),
  virtualIp: z.string(),
  preemption: z.boolean(),
  acceptMode: z.boolean(),
  advertIntervalMs: z.number().int(),
  devices: z.array(VrrpMember.extend({ name: z.string() })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type VrrpGroup = z.infer<typeof VrrpGroup>;

/** `GET /vrrp/status`: the state each member last reported. */
export const VrrpGroupStatus = z.object({
  id: Id,
  name: z.string(),
  virtualRouterId: z.number().int(),
  virtualIp: z.string(),
  devices: z.array(
    z.object({
      device: Id,
      name: z.string(),
      interface: z.string(),
      isConnected: z.boolean(),
      state: VrrpRouterState,
      since: Timestamp.nullable(),
    }),
  ),
});
export type VrrpGroupStatus = z.infer<typeof VrrpGroupStatus>;

/** `GET /vrrp/deviceVrrpInterfaces`: LAN interfaces that can carry a VRRP group, per device. */
export const DeviceVrrpInterfaces = z.object({
  device: Id,
  name: z.string(),
  interfaces: z.array(z.object({ devId: z.string(), name: z.string(), IPv4: z.string(), IPv4Mask: z.number().int().nullable() })),
});
export type DeviceVrrpInterfaces = z.infer<typeof DeviceVrrpInterfaces>;
