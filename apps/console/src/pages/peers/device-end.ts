/** The device end of a peer connection: approved devices and their assigned WAN interfaces. */
import { queryOptions } from "@tanstack/react-query";
import { type Device, type DeviceSummary, ok } from "@tern/client";
import { queryKey } from "../../api/keys.ts";
import { tern } from "../../api/tern.ts";

export const deviceDetailQuery = (org: string | null, id: string | null) =>
  queryOptions({
    queryKey: queryKey("device", org, "one", id),
    queryFn: () => ok(tern.api.GET("/api/devices/{id}", { params: { path: { id: id ?? "" } } })),
    enabled: Boolean(id),
  });

export function deviceOptions(devices: DeviceSummary[] | undefined) {
  return (devices ?? [])
    .filter((d) => d.isApproved)
    .map((d) => ({ value: d.id, label: d.name || d.hostname }))
    .sort((x, y) => x.label.localeCompare(y.label));
}

/** A tunnel starts from an assigned WAN interface; shown with its address. */
export function wanOptions(device: Pick<Device, "interfaces"> | undefined) {
  return (device?.interfaces ?? [])
    .filter((i) => i.type?.toUpperCase() === "WAN" && i.isAssigned !== false)
    .map((i) => ({ value: i.id, label: typeof i.IPv4 === "string" && i.IPv4 ? `${i.name} (${i.IPv4})` : i.name }));
}
