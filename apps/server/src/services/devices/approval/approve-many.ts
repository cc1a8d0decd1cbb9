/**
 * `POST /devices/approve`: approves many devices, each exactly as
 * `PUT /devices/{id}` with `isApproved: true` approves one (identity key
 * present, the device's config valid, no new LAN overlap; its whole config
 * queued). Devices go in batches of APPROVAL_BATCH, one transaction each
 * (approve-batch.ts: the checks run per device in memory, a refused device is
 * left out and the others go on), yielding to the event loop between batches
 * so the server keeps answering meanwhile. The jobs queued form one job group.
 */
import type { ErrorCode } from "@tern/protocol";
import { type ServiceCtx, withJobGroup } from "../../context.ts";
import { anyUuid } from "../../desired-config.ts";
import { type DeviceSelection, selectDeviceIds } from "../selection.ts";
import { approveBatch } from "./approve-batch.ts";

/** Devices approved in one transaction (set-based: a fixed number of statements), between two turns of the event loop. */
export const APPROVAL_BATCH = 500;

export type ApprovalResult =
  | { id: string; status: "approved"; jobs: number }
  | { id: string; status: "alreadyApproved" }
  | { id: string; status: "refused"; code: ErrorCode; error: string };

export interface ApproveManyResult {
  results: ApprovalResult[];
  approved: number;
  alreadyApproved: number;
  refused: number;
  /** The group of every job queued (`GET /api/jobs?group=<id>`); null when none was. */
  jobGroup: string | null;
  jobs: number;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function approveDevices(requestCtx: ServiceCtx, selection: DeviceSelection): Promise<ApproveManyResult> {
  const ctx = withJobGroup(requestCtx);
  const ids = await selectDeviceIds(ctx, selection);
  const approvedBefore = new Set<string>();
  for (let start = 0; start < ids.length; start += 5000) {
    const rows = await ctx.db
      .selectFrom("devices")
      .select("id")
      .where("organization_id", "=", ctx.org.id)
      .where("id", "=", anyUuid(ids.slice(start, start + 5000)))
      .where("is_approved", "=", true)
      .execute();
    for (const r of rows) approvedBefore.add(r.id);
  }

  const results: ApprovalResult[] = [];
  const jobIds: string[] = [];
  const pending = ids.filter((id) => !approvedBefore.has(id));
  const batches: string[][] = [];
  for (let start = 0; start < pending.length; start += APPROVAL_BATCH) batches.push(pending.slice(start, start + APPROVAL_BATCH));
  // Two batches in flight: one compiles (JavaScript) while the other's statements run (disjoint devices, each
  // batch locks its own in id order, so they cannot deadlock). On PGlite the statements still take turns.
  const done: Awaited<ReturnType<typeof approveBatch>>[] = [];
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const at = next++;
      if (at > 0) await nextTurn();
      done[at] = await approveBatch(ctx, batches[at]!);
    }
  };
  await Promise.all([worker(), worker()]);
  for (const d of done) {
    results.push(...d.results);
    jobIds.push(...d.jobIds);
  }
  const byId = new Map(results.map((r) => [r.id, r]));
  const ordered = ids.map((id): ApprovalResult => byId.get(id) ?? { id, status: "alreadyApproved" });
  const jobGroup = jobIds.length ? ctx.jobGroup : null;
  const count = (status: ApprovalResult["status"]) => ordered.filter((r) => r.status === status).length;
  return {
    results: ordered,
    approved: count("approved"),
    alreadyApproved: count("alreadyApproved"),
    refused: count("refused"),
    jobGroup,
    jobs: jobIds.length,
  };
}
