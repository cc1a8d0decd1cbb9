/**
 * What an admin enters for each lab edge when approving it (pure): every
 * interface the topology gives the edge becomes an assigned WAN (static
 * address, its cloud's gateway, the default-route metric of the plan) or LAN
 * (static address), matched to the registered interface by name, and the
 * edge's other routes become static routes. In a lab with a control plane the
 * builder leaves edges unaddressed: their addresses and routes come from Tern
 * through the agent, which then owns them (moves or removes them on a change).
 */
import type { Device, DeviceInterfaceUpdate, StaticRoute } from "@tern/protocol";
import type { LabPlan } from "../../plan/types.ts";

export interface PlannedInterface {
  name: string;
  type: "WAN" | "LAN";
  IPv4: string;
  IPv4Mask: number;
  gateway: string;
  metric: number;
}

/** The interfaces the plan gives `edge`, in WAN then LAN order. */
export function plannedInterfaces(plan: LabPlan, edge: string): PlannedInterface[] {
  const wans = plan.attachments
    .filter((a) => a.node === edge)
    .map((a): PlannedInterface => {
      const route = plan.routes.find((r) => r.node === edge && r.dst === "default" && r.dev === a.nodeIf);
      const [ip, mask] = a.address.split("/") as [string, string];
      return {
        name: a.nodeIf,
        type: "WAN",
        IPv4: ip,
        IPv4Mask: Number(mask),
        gateway: route ? a.gateway : "",
        metric: route?.metric ?? 0,
      };
    });
  const lans = plan.lanAttachments
    .filter((a) => a.node === edge && a.address)
    .map((a): PlannedInterface => {
      const [ip, mask] = a.address!.split("/") as [string, string];
      return { name: a.nodeIf, type: "LAN", IPv4: ip, IPv4Mask: Number(mask), gateway: "", metric: 0 };
    });
  return [...wans, ...lans];
}

/**
 * The `interfaces` of the approving `PUT /devices/{id}`: the registered
 * interfaces (by devId) with the plan's settings. Throws when the device did
 * not register an interface the plan has (the agent saw another namespace?).
 */
export function interfaceAssignment(plan: LabPlan, edge: string, device: Pick<Device, "interfaces">): DeviceInterfaceUpdate[] {
  const planned = plannedInterfaces(plan, edge);
  const missing = planned.filter((p) => !device.interfaces.some((i) => i.name === p.name)).map((p) => p.name);
  if (missing.length > 0)
    throw new Error(
      `device of '${edge}' registered without ${missing.join(", ")} (it has ${device.interfaces.map((i) => i.name).join(", ") || "none"})`,
    );
  return planned.map((p) => {
    const registered = device.interfaces.find((i) => i.name === p.name)!;
    return {
      ...registered,
      type: p.type,
      isAssigned: true,
      dhcp: false,
      IPv4: p.IPv4,
      IPv4Mask: p.IPv4Mask,
      gateway: p.gateway,
      metric: p.metric,
    };
  });
}

/**
 * The edge's other routes of the plan as Tern static routes: a site with
 * several WANs reaches each cloud's other members through its own attachment
 * to that cloud (plan/address-plan.ts), which the admin enters as routes.
 */
export function staticRoutes(plan: LabPlan, edge: string): StaticRoute[] {
  return plan.routes
    .filter((r) => r.node === edge && r.dst !== "default")
    .map((r) => ({ destination: r.dst, gateway: r.via, ifname: r.dev, metric: r.metric ?? 0 }));
}
