/** The jobs page's filter, as the API's `filter` (the server filters; the page shows the newest matches). */
import type { Job } from "@tern/client";
import type { Filter } from "../../api/filter.ts";

export interface JobFilter {
  state: Job["state"] | "all";
  type: Job["type"] | "all";
  /** Part of the device's name. */
  device: string;
}

export function jobFilters(f: JobFilter): Filter[] {
  const filters: Filter[] = [];
  if (f.state !== "all") filters.push({ key: "state", op: "==", val: f.state });
  if (f.type !== "all") filters.push({ key: "type", op: "==", val: f.type });
  if (f.device.trim()) filters.push({ key: "device.name", op: "contains", val: f.device.trim() });
  return filters;
}

/** How long a job took or has been running, in words ("queued" before it starts). */
export function jobDuration(job: Pick<Job, "startedAt" | "finishedAt">, now = Date.now()): string {
  if (!job.startedAt) return "queued";
  const end = job.finishedAt ? Date.parse(job.finishedAt) : now;
  const seconds = Math.max(0, Math.round((end - Date.parse(job.startedAt)) / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** The protocol's JobType (a value import of @tern/protocol would bundle zod); compile-checked to be complete. */
export const JOB_TYPES = [
  "modify",
  "tunnels",
  "deltunnels",
  "peers",
  "mlpolicy",
  "vrrp",
  "organization",
  "application",
  "sync",
  "restart-agent",
  "stop",
  "start",
  "reset",
  "upgrade",
  "ping",
  "traceroute",
  "dns",
  "logs",
  "dump",
] as const satisfies readonly Job["type"][];
const everyType: Exclude<Job["type"], (typeof JOB_TYPES)[number]> extends never ? true : never = true;
void everyType;

/**
 * The jobs a link opens the page on (`/jobs?group=<job group>` after an act on
 * several devices, `/jobs?ids=<job>,…` after one device's): the API's `group`
 * and `ids` parameters, or null for every job.
 */
export type JobScope = { group: string } | { ids: string };

export function jobScope(params: URLSearchParams): JobScope | null {
  const group = params.get("group")?.trim();
  if (group) return { group };
  const ids = params
    .get("ids")
    ?.split(",")
    .map((id) => id.trim())
    .filter(Boolean);
  return ids?.length ? { ids: ids.join(",") } : null;
}

/** The jobs page showing these jobs only. */
export function jobsLink(scope: JobScope): string {
  return "group" in scope ? `/jobs?group=${encodeURIComponent(scope.group)}` : `/jobs?ids=${encodeURIComponent(scope.ids)}`;
}
