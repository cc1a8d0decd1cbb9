/**
 * Pure merges of a device's interface list: what the agent discovers at
 * (re-)registration, and what an admin writes with `PUT /devices/{id}`.
 * Interfaces are matched by `devId` (the agent's hardware identity); their
 * `id` is assigned by the server once and never changes.
 */
import { DeviceInterface, type DeviceInterfaceUpdate, type RegisterInterface } from "@tern/protocol";
import { invalid, type Problem } from "../../validate/index.ts";

/** A newly discovered interface: unassigned; the one with a default gateway is suggested as WAN. */
export function discoveredInterface(reported: RegisterInterface, id: string): DeviceInterface {
  return DeviceInterface.parse({
    id,
    devId: reported.devId,
    name: reported.name,
    deviceType: reported.deviceType,
    type: reported.gateway ? "WAN" : "NONE",
    isAssigned: false,
    dhcp: reported.dhcp,
    IPv4: reported.IPv4,
    IPv4Mask: reported.IPv4Mask,
    gateway: reported.gateway,
  });
}

/**
 * The interface list after a (re-)registration. Known devIds keep the admin's
 * settings when assigned; an unassigned one takes the freshly discovered
 * name and addressing (nothing of the admin's is lost: it was not in use).
 * New devIds are added unassigned. A stored interface the agent no longer
 * reports is kept while assigned (configuration refers to it) and dropped
 * otherwise.
 */
export function mergeDiscovered(
  stored: readonly DeviceInterface[],
  reported: readonly RegisterInterface[],
  newId: () => string,
): DeviceInterface[] {
  const byDevId = new Map(stored.map((i) => [i.devId, i]));
  const seen = new Set<string>();
  const out: DeviceInterface[] = [];
  for (const r of reported) {
    if (seen.has(r.devId)) continue;
    seen.add(r.devId);
    const known = byDevId.get(r.devId);
    if (!known) out.push(discoveredInterface(r, newId()));
    else if (known.isAssigned) out.push(known);
    else
      out.push({
        ...discoveredInterface(r, known.id),
        pathlabels: known.pathlabels,
        bandwidthMbps: known.bandwidthMbps,
        // Radio settings (with their sealed secrets) survive a re-registration like the path labels.
        ...(known.lte ? { lte: known.lte } : {}),
        ...(known.wifi ? { wifi: known.wifi } : {}),
      });
  }
  for (const i of stored) if (!seen.has(i.devId) && i.isAssigned) out.push(i);
  return out;
}

/** Interface fields the server owns: an admin's value for them is ignored. */
const READ_ONLY = new Set(["id", "devId", "PublicIP", "PublicPort", "isPublicAddressRateLimited"]);

/**
 * The stored interfaces with the admin's entries applied. Each entry names an
 * interface by `devId`; only the fields present in the request body
 * (`presentKeys[i]`, all fields when not given) replace the stored ones, so an
 * entry `{devId, name, isAssigned: true}` does not reset the rest to defaults.
 * Interfaces the body does not name stay as they are.
 */
export function applyInterfaceUpdates(
  stored: readonly DeviceInterface[],
  updates: readonly DeviceInterfaceUpdate[],
  presentKeys?: readonly (readonly string[])[],
): { interfaces: DeviceInterface[]; problems: Problem[] } {
  const problems: Problem[] = [];
  const interfaces = stored.map((i) => ({ ...i }));
  const named = new Set<string>();
  updates.forEach((update, i) => {
    const at = `interfaces.${i}`;
    if (named.has(update.devId)) {
      problems.push(invalid(`${at}.devId`, `interface ${update.devId} is named twice`));
      return;
    }
    named.add(update.devId);
    const index = interfaces.findIndex((s) => s.devId === update.devId);
    const target = interfaces[index];
    if (!target) {
      problems.push(
        invalid(
          `${at}.devId`,
          `the device has no interface ${update.devId}; interfaces come from the device (known: ${stored.map((s) => s.devId).join(", ") || "none"})`,
        ),
      );
      return;
    }
    if (update.id !== undefined && update.id !== target.id) {
      problems.push(invalid(`${at}.id`, `interface ${update.devId} has id ${target.id}, not ${update.id}`));
      return;
    }
    const keys = presentKeys?.[i] ?? Object.keys(update);
    const changes = Object.fromEntries(
      keys.filter((k) => !READ_ONLY.has(k) && k in update).map((k) => [k, update[k as keyof DeviceInterfaceUpdate]]),
    );
    interfaces[index] = { ...target, ...changes };
  });
  return { interfaces, problems };
}
