/** The inbox's filter as the API's `filter` (shared by the list, the bulk update and the bulk delete). */
import type { Notification } from "@tern/client";
import type { Filter } from "../../api/filter.ts";

export interface InboxFilter {
  status: Notification["status"] | "all";
  resolved: "open" | "resolved" | "all";
  severity: Notification["severity"] | "all";
  search: string;
}

export const DEFAULT_INBOX: InboxFilter = { status: "all", resolved: "open", severity: "all", search: "" };

export function inboxFilters(f: InboxFilter): Filter[] {
  const filters: Filter[] = [];
  if (f.status !== "all") filters.push({ key: "status", op: "==", val: f.status });
  if (f.resolved !== "all") filters.push({ key: "resolved", op: "==", val: f.resolved === "resolved" });
  if (f.severity !== "all") filters.push({ key: "severity", op: "==", val: f.severity });
  if (f.search.trim()) filters.push({ key: "title", op: "contains", val: f.search.trim() });
  return filters;
}

/** A notification in words for the list's count line. */
export function inboxSummary(list: Pick<Notification, "status" | "severity">[]): string {
  const unread = list.filter((n) => n.status === "unread").length;
  const critical = list.filter((n) => n.severity === "critical").length;
  return `${list.length} notifications, ${unread} unread, ${critical} critical`;
}
