/** Resources named on the command line by id or by exact name, as people remember them. */
import { type Device, type DeviceSummary, ok, type Peer, type TernClient } from "@tern/client";
import { isUuid } from "../context.ts";
import { CliError, ExitCode, usageError } from "../exit-codes.ts";

const notFound = (what: string, ref: string, hint: string) =>
  new CliError(`no ${what} "${ref}" in this organization (see \`${hint}\`)`, ExitCode.NOT_FOUND, "NOT_FOUND");

const nameFilter = (name: string) => JSON.stringify([{ key: "name", op: "==", val: name }]);

export async function resolveDevice(tern: TernClient, ref: string): Promise<Device> {
  if (isUuid(ref)) return ok(tern.api.GET("/api/devices/{id}", { params: { path: { id: ref } } }));
  const found = (await ok(
    tern.api.GET("/api/devices", { params: { query: { filter: nameFilter(ref), response: "summary", limit: 2 } } }),
  )) as DeviceSummary[];
  if (found.length > 1) throw usageError(`several devices are named "${ref}": use the id`);
  if (!found[0]) throw notFound("device", ref, "tern devices ls");
  return ok(tern.api.GET("/api/devices/{id}", { params: { path: { id: found[0].id } } }));
}

export async function resolvePeer(tern: TernClient, ref: string): Promise<Peer> {
  if (isUuid(ref)) return ok(tern.api.GET("/api/peers/{id}", { params: { path: { id: ref } } }));
  const found = await ok(tern.api.GET("/api/peers", { params: { query: { filter: nameFilter(ref), limit: 2 } } }));
  if (found.length > 1) throw usageError(`several peers are named "${ref}": use the id`);
  if (!found[0]) throw notFound("peer", ref, "tern peers ls");
  return found[0];
}

type Interface = Device["interfaces"][number];

/** The interface a tunnel uses on a device: the one named, else the first assigned WAN interface. */
export function tunnelInterface(device: Device, name: string | undefined): Interface {
  if (name) {
    const named = device.interfaces.find((i) => i.name === name || i.id === name);
    if (!named) throw usageError(`device ${device.name} has no interface "${name}"`);
    return named;
  }
  const wan = device.interfaces.find((i) => i.type === "WAN" && i.isAssigned);
  if (!wan) throw usageError(`device ${device.name} has no assigned WAN interface: approve it with --wan <interface>`);
  return wan;
}
