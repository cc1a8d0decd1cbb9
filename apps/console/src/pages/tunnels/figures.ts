/**
 * The tunnels list's figures: a tunnel's live quality is reported by both of
 * its ends; the list shows the worse of the two (the one a network admin acts
 * on). Also the filter of the list and the WAN interfaces a tunnel can use.
 */
import type { Device, Tunnel } from "@tern/client";

export interface Figures {
  loss: number;
  rtt: number;
  jitter: number;
}

/** The worse side's loss/RTT/jitter, or null before either side has reported. */
export function worstFigures(quality: Tunnel["quality"] | undefined): Figures | null {
  const sides = [quality?.a, quality?.b].filter((s): s is NonNullable<typeof s> => Boolean(s?.at));
  if (sides.length === 0) return null;
  return {
    loss: Math.max(...sides.map((s) => s.loss)),
    rtt: Math.max(...sides.map((s) => s.rtt)),
    jitter: Math.max(...sides.map((s) => s.jitter)),
  };
}

export type TunnelStatus = Tunnel["status"];

export function filterTunnels(tunnels: Tunnel[], search: string, status: TunnelStatus | "all"): Tunnel[] {
  const needle = search.trim().toLowerCase();
  return tunnels
    .filter((t) => status === "all" || t.status === status)
    .filter(
      (t) =>
        !needle ||
        [String(t.num), t.description, t.deviceA.name, t.deviceB?.name, t.peer?.name, t.interfaceA?.IPv4, t.interfaceB?.IPv4]
          .filter(Boolean)
          .some((text) => String(text).toLowerCase().includes(needle)),
    )
    .sort((x, y) => x.num - y.num);
}

export type Interface = Device["interfaces"][number];

/** The interfaces a tunnel can start from: the device's WAN interfaces that have an address. */
export function wanInterfaces(device: Pick<Device, "interfaces"> | undefined): Interface[] {
  return (device?.interfaces ?? []).filter((i) => i.type?.toUpperCase() === "WAN" && i.isAssigned !== false);
}

export function interfaceLabel(i: Interface): string {
  const address = typeof i.IPv4 === "string" && i.IPv4 ? ` (${i.IPv4})` : "";
  return `${i.name}${address}`;
}

export const fixed = (value: number | undefined, digits = 1) => (value === undefined ? "–" : value.toFixed(digits));
