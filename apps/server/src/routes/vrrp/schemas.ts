import { z } from "@hono/zod-openapi";
import { DeviceVrrpInterfaces, Id, VrrpGroup, VrrpGroupCreate, VrrpGroupStatus } from "@tern/protocol";

export const VrrpGroupSchema = VrrpGroup.meta({ id: "VrrpGroup" });
export const VrrpGroupCreateSchema = VrrpGroupCreate.meta({ id: "VrrpGroupCreate" });
export const VrrpGroupChangedSchema = VrrpGroup.extend({
  /** Jobs queued for the members (old and new). */
  jobIds: z.array(Id),
}).meta({ id: "VrrpGroupChanged" });
export const VrrpGroupStatusSchema = VrrpGroupStatus.meta({ id: "VrrpGroupStatus" });
export const DeviceVrrpInterfacesSchema = DeviceVrrpInterfaces.meta({ id: "DeviceVrrpInterfaces" });

export const VRRP_KEYS =
  "Filter and sort keys: id, name, virtualRouterId, virtualIp, preemption, acceptMode, advertIntervalMs, createdAt, updatedAt. Default sort: virtualRouterId.";
export const VRRP_RULES =
  "The virtual router id (1-255) must be unused in the organization (409 CONFLICT). Each member is a device of the organization, once, with an assigned LAN interface (devId) that has a static address; all members share one subnet with distinct addresses; the virtual IP is a host address of that subnet, no member's own address, outside the members' DHCP ranges and reservations; tracked interfaces are assigned interfaces of the member. Members keep the given order. Member devices get a `vrrp` job; their DHCP `routers` option becomes the virtual IP.";
