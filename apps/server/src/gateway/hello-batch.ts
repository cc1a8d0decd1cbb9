/**
 * The hellos of devices, recorded in batches (a group commit: the hellos
 * arriving while one transaction runs go together in the next, a lone one
 * at once): a fixed five statements per transaction, whatever its size (six when
 * a device reports an applied hash), instead of about ten per device plus a
 * dispatch transaction. For every link of the batch: the device rows locked
 * in id order, read with their stored public addresses and the tunnels they
 * are an end of; the device must still be approved and hold the key its hello
 * proved (a device registered before keys binds it, one by one, audited);
 * then one statement opens the sessions and tells the other instances of
 * them (NOTIFY, heard at commit), the jobs its applied hash satisfies are
 * settled, and one statement sends again what is still running from an
 * earlier link with its queued jobs, as one apply of its newest desired
 * config (the first dispatch, checked with the row locked like every
 * dispatch), or puts it back in the queue when there is nothing to send.
 *
 * The signature of the hello (link-proof.ts) is checked before a link gets
 * here, one link at a time, exactly as before.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { GroupCommit } from "../db/group-commit.ts";
import type { Db, PublicAddressHistory } from "../db/schema.ts";
import type { AppDeps } from "../deps.ts";
import type { Settled } from "../jobs/job-engine.ts";
import { restartLinkJobs, settleJobsByHashMany } from "../jobs/job-store.ts";
import { lockDevices } from "../services/desired-config.ts";
import { openDesiredConfigJson } from "../services/desired-config-seal.ts";
import { holdsOrBindsKey } from "../services/devices/identity/link-identity.ts";
import type { DeviceConnection } from "./connection.ts";
import { openSessions } from "./sessions.ts";
import { tunnelSidesColumn, tunnelSidesOf } from "./tunnel-sides.ts";

/** What the hello's transaction found for one link. */
export type HelloOutcome =
  /** Not approved (any more), deleted (`deleted`), or the link closed before its turn. */
  | { kind: "gone"; deleted?: boolean }
  /** The device row was locked elsewhere: try again in a later batch. */
  | { kind: "busy" }
  /** The key the hello proved is no longer the device's (reset or re-key since the upgrade). */
  | { kind: "identity" }
  | {
      kind: "welcome";
      interfaces: unknown;
      desiredHash: string | null;
      desiredSealed: string | null;
      storedAddresses: Record<string, PublicAddressHistory> | undefined;
      tunnels: Map<string, "a" | "b">;
      settled: Settled;
      /** The first apply, started in the same transaction (its jobs are running). */
      apply: { applyId: string; hash: string; configJson: string } | null;
    };

/**
 * How long the first hello of a quiet moment waits for others to share its transaction: none. A
 * lone hello goes at once (as before batching); under load the hellos that arrive while a
 * transaction runs go together in the next one.
 */
export const HELLO_WINDOW_MS = 0;

/** A hello whose device row was locked elsewhere is tried again after this long. */
const BUSY_RETRY_MS = 20;

/** Hellos recorded in one transaction at most. */
const HELLO_MAX_BATCH = 200;

/**
 * Hellos go through one group commit: a lone hello gets its transaction at once (HELLO_WINDOW_MS), and
 * the hellos that arrive while it runs go together in the next one. Until 2026-12-05 up to 8 hellos had
 * a transaction of their own each and only those beyond went into two lanes (a choice measured under a
 * load average of 17-41): at 10,000 devices on the quiet 2-core machine that made 4,300-4,400
 * transactions of 2.3 hellos, where one lane makes about 800 of 12, and brought 346-365 devices online
 * a second against 440-472 (docs/bench.md): on this machine every statement waits for a core, and
 * fewer, larger transactions leave more of them to the devices' work.
 */
export function helloBatcher(
  deps: AppDeps,
  instanceId: string,
): { submit(conn: DeviceConnection): Promise<Exclude<HelloOutcome, { kind: "busy" }>> } {
  const hellos = new GroupCommit<DeviceConnection, HelloOutcome>(
    (conns) => {
      deps.metrics.helloBatchSize.observe(conns.length);
      return deps.db.transaction().execute((trx) => recordHellos(deps, instanceId, trx, conns));
    },
    HELLO_MAX_BATCH,
    HELLO_WINDOW_MS,
  );
  const submit = async (conn: DeviceConnection): Promise<Exclude<HelloOutcome, { kind: "busy" }>> => {
    if (conn.state !== "welcoming") return { kind: "gone" };
    const out = await hellos.submit(conn);
    if (out.kind !== "busy") return out;
    // Its row is held elsewhere for a moment: a later batch (the link's hello time-out bounds the tries).
    await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
    return submit(conn);
  };
  return { submit };
}

async function recordHellos(deps: AppDeps, instanceId: string, trx: Db, conns: DeviceConnection[]): Promise<HelloOutcome[]> {
  const outcomes = new Map<DeviceConnection, HelloOutcome>();
  const waiting = conns.filter((c) => c.state === "welcoming");
  const rows = new Map(
    (
      await lockDevices(
        trx,
        waiting.map((c) => c.deviceId),
      )
        .select([
          "id",
          "desired_hash",
          "desired_config_enc",
          "interfaces",
          "is_approved",
          "public_key",
          "data_plane",
          "desired_stale",
          sql<
            Record<string, PublicAddressHistory> | undefined
          >`(select public_addresses from device_state s where s.device_id = devices.id)`.as("stored"),
          // The tunnels it is an end of, and which end: a status may report only these.
          tunnelSidesColumn.as("tunnel_sides"),
        ])
        // A row held by another transaction (the status writer, an admin change) is not waited for: its
        // hello goes into a later batch, so one busy row does not hold up the batch.
        .skipLocked()
        .execute()
    ).map((r) => [r.id, r]),
  );
  const exists = new Set(
    waiting.length > rows.size
      ? (
          await trx
            .selectFrom("devices")
            .select("id")
            .where("id", "=", sql<string>`any(${waiting.filter((c) => !rows.has(c.deviceId)).map((c) => c.deviceId)}::uuid[])`)
            .execute()
        ).map((r) => r.id)
      : [],
  );
  const welcomed: DeviceConnection[] = [];
  for (const conn of waiting) {
    const dev = rows.get(conn.deviceId);
    if (!dev && exists.has(conn.deviceId)) {
      outcomes.set(conn, { kind: "busy" });
      continue;
    }
    if (!dev) {
      outcomes.set(conn, { kind: "gone", deleted: true });
      continue;
    }
    if (!dev.is_approved) continue;
    // Reset or re-keyed since the upgrade: the key this hello proved is no longer the device's.
    if (!(await holdsOrBindsKey(deps, trx, conn.device, dev.public_key, conn.publicKey!))) {
      outcomes.set(conn, { kind: "identity" });
      continue;
    }
    welcomed.push(conn);
  }
  if (welcomed.length > 0) {
    await openSessions(trx, welcomed, instanceId);
    // The jobs each device's reported hash satisfies end (and time-outs it proves wrong are corrected).
    for (const conn of welcomed) conn.settledHash = conn.appliedHash;
    const settledBy = await settleJobsByHashMany(
      trx,
      welcomed.flatMap((c) =>
        c.appliedHash ? [{ deviceId: c.deviceId, hash: c.appliedHash, desiredHash: rows.get(c.deviceId)!.desired_hash }] : [],
      ),
    );
    const applies = welcomed.flatMap((c) => {
      const d = rows.get(c.deviceId)!;
      // A stopped data plane holds its config jobs until `start`; a device a fan-out marked stale waits for
      // the recompiler (its stored config is the old one): as the dispatcher does (job-engine.ts).
      return d.desired_config_enc && d.desired_hash && d.data_plane !== "stopped" && !d.desired_stale
        ? [{ deviceId: c.deviceId, applyId: randomUUID(), hash: d.desired_hash, sealed: d.desired_config_enc }]
        : [];
    });
    // Whatever is still running came from an earlier link (or a dead instance): it goes out again, with the
    // queued jobs, as the device's apply (back to the queue when it gets none). Remote actions other than sync
    // are left alone: they were asked of that link (job-store.ts).
    const applyOf = new Map(applies.map((a) => [a.deviceId, a]));
    const started = await restartLinkJobs(
      trx,
      welcomed.map((c) => ({ deviceId: c.deviceId, apply: applyOf.get(c.deviceId) ?? null })),
    );
    for (const conn of welcomed) {
      const dev = rows.get(conn.deviceId)!;
      // Its apply goes out only when it started jobs.
      const apply = started.has(conn.deviceId) ? applyOf.get(conn.deviceId) : undefined;
      outcomes.set(conn, {
        kind: "welcome",
        interfaces: dev.interfaces,
        desiredHash: dev.desired_hash,
        desiredSealed: dev.desired_config_enc,
        storedAddresses: dev.stored ?? undefined,
        tunnels: tunnelSidesOf(dev.tunnel_sides),
        settled: { completed: [], corrected: [], failed: [], ...settledBy.get(conn.deviceId) },
        // The one place besides the dispatcher a desired config is opened: it goes to its device.
        apply: apply
          ? {
              applyId: apply.applyId,
              hash: apply.hash,
              configJson: openDesiredConfigJson(deps.keyring, conn.deviceId, apply.sealed),
            }
          : null,
      });
    }
  }
  return conns.map((c) => outcomes.get(c) ?? { kind: "gone" });
}
