/** The devices table's rows: status, search, filters and sort over the API's device summaries. */
import type { DeviceSummary } from "@tern/client";

export type DeviceStatus = "online" | "offline" | "pending";
export type SortKey = "name" | "hostname" | "status" | "pendingNotifications";

export const statusOf = (d: Pick<DeviceSummary, "isApproved" | "isConnected">): DeviceStatus =>
  !d.isApproved ? "pending" : d.isConnected ? "online" : "offline";

export const isRateLimited = (d: DeviceSummary) => d.interfaces.some((i) => i.isPublicAddressRateLimited === true);

export interface RowQuery {
  search: string;
  status: DeviceStatus | "all";
  rateLimitedOnly: boolean;
  /** Only devices with this tag ("" or absent: any). */
  tag?: string;
  sort: SortKey;
  desc: boolean;
}

const STATUS_ORDER: Record<DeviceStatus, number> = { pending: 0, offline: 1, online: 2 };
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

/** Every tag of the devices, sorted, for the tag filter. */
export function tagsOf(devices: DeviceSummary[]): string[] {
  return [...new Set(devices.flatMap((d) => d.tags ?? []))].sort(collator.compare);
}

export function deviceRows(devices: DeviceSummary[], q: RowQuery): DeviceSummary[] {
  const needle = q.search.trim().toLowerCase();
  const rows = devices.filter(
    (d) =>
      (q.status === "all" || statusOf(d) === q.status) &&
      (!q.rateLimitedOnly || isRateLimited(d)) &&
      (!q.tag || (d.tags ?? []).includes(q.tag)) &&
      (!needle ||
        d.name.toLowerCase().includes(needle) ||
        d.hostname.toLowerCase().includes(needle) ||
        d.interfaces.some((i) => (i.IPv4 ?? "").startsWith(needle))),
  );
  const key = q.sort;
  const compare: (a: DeviceSummary, b: DeviceSummary) => number =
    key === "status"
      ? (a, b) => STATUS_ORDER[statusOf(a)] - STATUS_ORDER[statusOf(b)]
      : key === "pendingNotifications"
        ? (a, b) => a.pendingNotifications - b.pendingNotifications
        : (a, b) => collator.compare(a[key], b[key]);
  const sign = q.desc ? -1 : 1;
  return rows.sort((a, b) => sign * compare(a, b) || collator.compare(a.name, b.name));
}
