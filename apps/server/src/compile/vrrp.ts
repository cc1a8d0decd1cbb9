/** VRRP groups the device is a member of: its LAN interface by name, priority and tracked interfaces. */
import type { ConfigVrrp } from "@tern/protocol";
import type { CompileContext } from "./context.ts";
import { interfaceAddress } from "./device-networks.ts";
import { compareText, sortedUnique } from "./order.ts";

export function compileVrrp(ctx: CompileContext): ConfigVrrp[] {
  const deviceId = ctx.input.device.id;
  const out: ConfigVrrp[] = [];
  for (const group of ctx.input.vrrpGroups) {
    const member = group.devices.find((m) => m.device === deviceId);
    if (!member) continue;
    const subject = { type: "vrrp" as const, id: group.id };
    const path = `vrrpGroups.${group.id}`;
    const iface = ctx.assigned.get(member.interface);
    const address = iface ? interfaceAddress(iface) : null;
    if (iface?.type !== "LAN" || address === null) {
      ctx.warn({
        path,
        subject,
        message: `VRRP group ${group.name} left out: ${member.interface} is not an assigned LAN interface with an address`,
      });
      continue;
    }
    const names = (devIds: readonly string[], field: string) =>
      sortedUnique(
        devIds.flatMap((devId) => {
          const tracked = ctx.assigned.get(devId);
          if (tracked) return [tracked.name];
          ctx.warn({ path: `${path}.${field}`, subject, message: `tracked interface ${devId} is not assigned; not tracked` });
          return [];
        }),
        compareText,
      );
    out.push({
      groupId: group.id,
      virtualRouterId: group.virtualRouterId,
      interface: iface.name,
      virtualIp: group.virtualIp,
      prefix: address.prefix,
      priority: member.priority,
      preemption: group.preemption,
      acceptMode: group.acceptMode,
      advertIntervalMs: group.advertIntervalMs,
      trackOptional: names(member.trackInterfacesOptional, "trackInterfacesOptional"),
      trackMandatory: names(member.trackInterfacesMandatory, "trackInterfacesMandatory"),
    });
  }
  return out.sort((a, b) => a.virtualRouterId - b.virtualRouterId || compareText(a.groupId, b.groupId));
}
