/**
 * Configuration snapshots: record the desired configuration hash of every
 * device under a label, and later tell which devices' configuration changed
 * since (change windows, audits). Reads only what the server already compiled.
 */
import { createHash } from "node:crypto";
import { Name } from "@tern/protocol";
import { z } from "zod";
import { ApiError } from "../../http/errors.ts";
import type { ServiceCtx } from "../../services/context.ts";
import { type AppDefinition, defineAction } from "../types.ts";

/** Snapshots kept per organization; the oldest goes first. */
export const MAX_SNAPSHOTS = 10;

interface Snapshot {
  label: string;
  at: string;
  devices: number;
  fingerprint: string;
  hashes: Record<string, string | null>;
}

const LabelParams = z.strictObject({ label: Name });

async function currentHashes(ctx: ServiceCtx) {
  const rows = await ctx.db
    .selectFrom("devices")
    .select(["id", "name", "desired_hash"])
    .where("organization_id", "=", ctx.org.id)
    .orderBy("id")
    .execute();
  const fingerprint = createHash("sha256")
    .update(rows.map((r) => `${r.id}:${r.desired_hash ?? ""}\n`).join(""))
    .digest("hex");
  return { rows, fingerprint };
}

const snapshotsOf = (state: Record<string, unknown>) => (state.snapshots as Snapshot[] | undefined) ?? [];

export const configSnapshot: AppDefinition = {
  id: "config-snapshot",
  name: "Configuration snapshots",
  description: "Record the fleet's desired configuration under a label and see which devices changed since.",
  actions: {
    "take-snapshot": defineAction({
      description: `Record every device's desired configuration hash under a label (an existing label is replaced; the newest ${MAX_SNAPSHOTS} are kept). Params: label.`,
      params: LabelParams,
      async run({ ctx, state }, { label }) {
        const { rows, fingerprint } = await currentHashes(ctx);
        const snapshot: Snapshot = {
          label,
          at: new Date().toISOString(),
          devices: rows.length,
          fingerprint,
          hashes: Object.fromEntries(rows.map((r) => [r.id, r.desired_hash])),
        };
        const snapshots = [...snapshotsOf(state).filter((s) => s.label !== label), snapshot].slice(-MAX_SNAPSHOTS);
        return {
          state: { ...state, snapshots },
          result: { label, at: snapshot.at, devices: snapshot.devices, fingerprint },
          summary: `snapshot ${label} of ${rows.length} devices`,
        };
      },
    }),
    "compare-snapshot": defineAction({
      description:
        "Compare the current desired configuration with a snapshot: devices changed, added and removed since. Params: label.",
      params: LabelParams,
      async run({ ctx, state }, { label }) {
        const snapshot = snapshotsOf(state).find((s) => s.label === label);
        if (!snapshot) {
          const known = snapshotsOf(state).map((s) => s.label);
          throw new ApiError("NOT_FOUND", `no snapshot labelled ${label}`, [
            { path: "params.label", message: known.length ? `known labels: ${known.join(", ")}` : "no snapshot taken yet" },
          ]);
        }
        const { rows, fingerprint } = await currentHashes(ctx);
        const now = new Set(rows.map((r) => r.id));
        const ref = (r: { id: string; name: string }) => ({ id: r.id, name: r.name });
        const changed = rows.filter((r) => r.id in snapshot.hashes && snapshot.hashes[r.id] !== r.desired_hash).map(ref);
        const added = rows.filter((r) => !(r.id in snapshot.hashes)).map(ref);
        const removed = Object.keys(snapshot.hashes).filter((id) => !now.has(id));
        const unchanged = fingerprint === snapshot.fingerprint;
        return {
          state,
          result: { label, takenAt: snapshot.at, unchanged, changed, added, removed },
          summary: unchanged
            ? `no change since ${label}`
            : `${changed.length} changed, ${added.length} added, ${removed.length} removed since ${label}`,
        };
      },
    }),
  },
};
