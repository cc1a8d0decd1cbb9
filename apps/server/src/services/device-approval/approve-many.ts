/**
 * `POST /devices/approve`: approves many devices, each exactly as
 * `PUT /devices/{id}` with `isApproved: true` approves one (identity key
 * present, the device's config valid, no new LAN overlap; its whole config
 * queued), each in its own transaction so one refusal does not undo the
 * others. Devices go in batches, yielding to the event loop between batches
 * so the server keeps answering meanwhile. The jobs queued form one job group.
 */
import type { ErrorCode } from "@tern/protocol";
import { ApiError } from "../../http/errors.ts";
import type { ServiceCtx } from "../context.ts";
import { anyUuid } from "../desired-config.ts";
import { type DeviceSelection, selectDeviceIds } from "../device-selection.ts";
import { updateDevice } from "../device-update.ts";
import { recordJobGroup } from "./job-groups.ts";

/** Devices approved between two turns of the event loop. */
export const APPROVAL_BATCH = 50;

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

export async function approveDevices(ctx: ServiceCtx, selection: DeviceSelection): Promise<ApproveManyResult> {
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
  for (let start = 0; start < ids.length; start += APPROVAL_BATCH) {
    if (start > 0) await nextTurn();
    for (const id of ids.slice(start, start + APPROVAL_BATCH)) {
      if (approvedBefore.has(id)) {
        results.push({ id, status: "alreadyApproved" });
        continue;
      }
      try {
        const done = await updateDevice(ctx, { id, body: { isApproved: true } });
        jobIds.push(...done.jobIds);
        results.push({ id, status: "approved", jobs: done.jobIds.length });
      } catch (error) {
        // Refusals a single approval answers as 4xx are this device's result; anything else is the server's.
        if (!(error instanceof ApiError)) throw error;
        results.push({ id, status: "refused", code: error.code, error: error.message });
      }
    }
  }
  const jobGroup = await recordJobGroup(ctx.db, ctx.org.id, jobIds);
  const count = (status: ApprovalResult["status"]) => results.filter((r) => r.status === status).length;
  return {
    results,
    approved: count("approved"),
    alreadyApproved: count("alreadyApproved"),
    refused: count("refused"),
    jobGroup,
    jobs: jobIds.length,
  };
}
