/**
 * The dispatcher and job lifecycle for the devices whose link this instance
 * holds. Per device at most one `apply` is in flight, carrying the newest
 * desired config; every queued job goes out with it (coalescing) and they
 * finish together. Results, reported hashes and time-outs move the jobs
 * (job-store.ts); when nothing is in flight and the device's applied hash is
 * not its desired one, a `sync` job is queued (at most N times since the last
 * change, then auto-sync pauses and `self-healing-failed` is emitted).
 *
 * Every method runs in the device's serial chain (DeviceConnection.serial),
 * and every transaction locks the device row first, so instances that touch
 * the same device (a new link elsewhere, a change queued anywhere) take turns.
 */
import { randomUUID } from "node:crypto";
import { type ApplyResult, CLOSE_CODES, type JobError, MAX_MESSAGE_BYTES } from "@tern/protocol";
import { sql } from "kysely";
import { SYSTEM_ACTOR } from "../auth/access.ts";
import { GroupCommit } from "../db/group-commit.ts";
import type { Db } from "../db/schema.ts";
import type { AppDeps } from "../deps.ts";
import type { DeviceConnection } from "../gateway/connection.ts";
import type { GatewayEvents } from "../gateway/events.ts";
import type { GatewayOptions } from "../gateway/options.ts";
import { loadTunnelSides, loadTunnelSidesMany } from "../gateway/tunnel-sides.ts";
import { systemCtx } from "../services/context.ts";
import { lockDevices, queueConfigJobs } from "../services/desired-config.ts";
import { openDesiredConfigJson } from "../services/desired-config-seal.ts";
import { recordHealingAction } from "../services/healing/actions.ts";
import { healingModeOf } from "../services/healing/settings.ts";
import { emptySettled, reportFinishedJobs, type Settled } from "./finished-jobs.ts";
import { countActive, failApply, failQueued, settleJobsByHash, settleJobsByHashMany, startQueuedJobs } from "./job-store.ts";

export type { Settled } from "./finished-jobs.ts";

/** Why a queued job of a device without a desired config fails. */
const NO_CONFIG: JobError = { reason: "no-config", message: "the device has no desired config to send", drivers: [] };

interface ResultInput {
  conn: DeviceConnection;
  msg: ApplyResult;
  /** The hash the apply carried. */
  sentHash: string;
}

interface ResultOutcome {
  settled: Settled;
  /** The device reported its desired config applied. */
  converged: boolean;
}

/** An apply to send: `configJson` is the desired config's JSON text as stored (sealed) with its hash. */
export type SendPlan = { kind: "send"; applyId: string; hash: string; configJson: string; settled: Settled };

type Plan =
  | SendPlan
  | { kind: "idle" | "again"; settled: Settled }
  /** The device's row is gone (deleted) or no longer approved: its link ends with the matching code. */
  | { kind: "gone"; deleted: boolean; settled: Settled }
  | { kind: "paused"; settled: Settled; desiredHash: string; attempts: number };

export class JobEngine {
  constructor(
    private readonly deps: AppDeps,
    private readonly events: GatewayEvents,
    private readonly options: GatewayOptions,
  ) {}

  private get db(): Db {
    return this.deps.db;
  }

  /**
   * Inside a transaction that holds the device row: the device reports `hash`
   * applied, so the jobs it satisfies complete and timed-out ones are corrected.
   */
  async settleByHash(
    trx: Db,
    conn: { deviceId: string; settledHash?: string | null },
    hash: string | null,
    desiredHash: string | null,
  ): Promise<Settled> {
    const settled = emptySettled();
    const deviceId = conn.deviceId;
    conn.settledHash = hash;
    if (!hash) return settled;
    const { completed, corrected } = await settleJobsByHash(trx, deviceId, hash, desiredHash);
    settled.completed = completed;
    settled.corrected = corrected;
    return settled;
  }

  /** Metrics and the `jobs-finished` event for jobs that ended (all of `conn`'s device). */
  report(_conn: { deviceId: string; orgId: string }, settled: Settled): void {
    reportFinishedJobs(this.deps, this.events, settled);
  }

  /** Sends the device its newest desired config when jobs wait and nothing is in flight; handles drift. */
  async dispatch(conn: DeviceConnection): Promise<void> {
    for (let round = 0; round < 3; round++) {
      if (conn.state !== "ready" || conn.inFlight) return;
      const plan = await this.plans.submit(conn);
      this.report(conn, plan.settled);
      if (plan.kind === "send") return this.send(conn, plan);
      if (plan.kind === "gone")
        return plan.deleted
          ? conn.close(CLOSE_CODES.deviceDeleted, "device deleted")
          : conn.close(CLOSE_CODES.notApproved, "device approval withdrawn");
      if (plan.kind === "paused") {
        this.deps.metrics.autoSyncs.inc({ outcome: "paused" });
        conn.logger.warn(
          { attempts: plan.attempts },
          "automatic re-sync did not converge: auto-sync paused until the next change",
        );
        this.events.emit("self-healing-failed", {
          deviceId: conn.deviceId,
          orgId: conn.orgId,
          desiredHash: plan.desiredHash,
          appliedHash: conn.appliedHash,
          attempts: plan.attempts,
        });
      }
      if (plan.kind !== "again") return;
    }
  }

  /**
   * What to do next for several devices, in one transaction (group commit, like the results): their
   * rows locked in id order, hashes they reported but not yet settled finish their jobs, and each
   * device with a desired config starts its queued jobs as one apply. A device with nothing to
   * start goes on alone (no config, drift).
   */
  private readonly plans = new GroupCommit<DeviceConnection, Plan>((conns) =>
    this.db.transaction().execute(async (trx) => {
      const rows = await lockDevices(
        trx,
        conns.map((c) => c.deviceId),
      )
        .select([
          "id",
          "desired_config_enc",
          "desired_hash",
          "desired_stale",
          "sync_attempts",
          "auto_sync_paused",
          "is_approved",
          "data_plane",
        ])
        .execute();
      const present = new Set(rows.map((d) => d.id));
      // Checked with the row locked, right before the config (PSKs and all) goes out: a device whose
      // approval was withdrawn gets nothing, even before the trigger's notification closes its link.
      const devs = new Map(rows.filter((d) => d.is_approved).map((d) => [d.id, d]));
      // Only a hash not settled yet can finish jobs here (a new queued job for the applied hash still goes out).
      const settling = conns.filter((c) => devs.has(c.deviceId) && c.appliedHash !== c.settledHash);
      for (const c of settling) c.settledHash = c.appliedHash;
      const settledBy = await settleJobsByHashMany(
        trx,
        settling.flatMap((c) =>
          c.appliedHash ? [{ deviceId: c.deviceId, hash: c.appliedHash, desiredHash: devs.get(c.deviceId)!.desired_hash }] : [],
        ),
      );
      const applies = new Map<string, { deviceId: string; applyId: string; hash: string; sealed: string }>();
      // A device whose data plane was stopped (a `stop` action) keeps its jobs queued until `start`; one a
      // fan-out marked stale waits for the recompiler (services/fanout): its stored config is the old one.
      for (const { id, desired_config_enc: sealed, desired_hash: hash, data_plane, desired_stale: stale } of devs.values())
        if (sealed && hash && data_plane !== "stopped" && !stale)
          applies.set(id, { deviceId: id, applyId: randomUUID(), hash, sealed });
      const started = await startQueuedJobs(trx, [...applies.values()]);
      // Devices without a desired config (not stopped, not waiting for the recompiler): their queued jobs fail.
      const configless = [...devs.values()].filter(
        (d) => !d.desired_stale && d.data_plane !== "stopped" && (!d.desired_config_enc || !d.desired_hash),
      );
      const failedBy = await failQueued(
        trx,
        configless.map((d) => d.id),
        NO_CONFIG,
      );
      const plans: Plan[] = [];
      for (const conn of conns) {
        const dev = devs.get(conn.deviceId);
        const settled: Settled = { ...emptySettled(), ...settledBy.get(conn.deviceId) };
        const apply = applies.get(conn.deviceId);
        if (!dev) plans.push({ kind: "gone", deleted: !present.has(conn.deviceId), settled });
        // Neither drift nor a missing config can be judged until it is recompiled; the recompiler wakes it (tern_jobs).
        else if (dev.desired_stale) plans.push({ kind: "idle", settled });
        else if (apply && started.has(conn.deviceId))
          // The one place a desired config is opened: it goes to its device.
          plans.push({
            kind: "send",
            applyId: apply.applyId,
            hash: apply.hash,
            configJson: openDesiredConfigJson(this.deps.keyring, conn.deviceId, apply.sealed),
            settled,
          });
        else {
          for (const job of failedBy.get(conn.deviceId) ?? []) settled.failed.push({ ...job, error: NO_CONFIG });
          plans.push(await this.planIdle(trx, conn, dev, settled));
        }
      }
      return plans;
    }),
  );

  /** Nothing to start for the device (its queued jobs failed above if it has no config): drift queues a `sync`. */
  private async planIdle(
    trx: Db,
    conn: DeviceConnection,
    dev: {
      desired_config_enc: string | null;
      desired_hash: string | null;
      sync_attempts: number;
      auto_sync_paused: boolean;
      data_plane: "running" | "stopped";
    },
    settled: Settled,
  ): Promise<Plan> {
    // Stopped on purpose: queued jobs wait for `start`, and what it runs is no drift to repair.
    if (dev.data_plane === "stopped") return { kind: "idle", settled };
    // Drift: nothing to send, yet the device does not run its desired config.
    const drifted = dev.desired_hash !== null && conn.appliedHash !== dev.desired_hash;
    if (!drifted || dev.auto_sync_paused || conn.deviceApplying) return { kind: "idle", settled };
    if ((await countActive(trx, conn.deviceId)).running > 0) return { kind: "idle", settled };
    // Healing (docs/healing.md): the organization may want drift only reported (`suggest`) or left alone (`off`).
    const mode = await healingModeOf(trx, conn.device.orgId);
    const drift = { reportedHash: conn.appliedHash ?? "none", desiredHash: dev.desired_hash!, attempt: dev.sync_attempts + 1 };
    const driftOrg = { id: conn.device.orgId, accountId: conn.device.accountId, name: conn.device.orgName };
    if (mode === "off") return { kind: "idle", settled };
    if (mode === "suggest") {
      const known = await trx
        .selectFrom("healing_actions")
        .select("id")
        .where("device_id", "=", conn.deviceId)
        .where("kind", "=", "reapply")
        .where(
          sql<boolean>`before ->> 'reportedHash' = ${drift.reportedHash} and before ->> 'desiredHash' = ${drift.desiredHash}`,
        )
        .executeTakeFirst();
      if (!known)
        await recordHealingAction(trx, driftOrg, SYSTEM_ACTOR, {
          deviceId: conn.deviceId,
          tunnelId: null,
          kind: "reapply",
          mode: "suggest",
          source: "server",
          link: "device",
          reason: "the device reports a config hash other than its desired one: re-applying it would repair the drift",
          before: drift,
          after: null,
        });
      return { kind: "idle", settled };
    }
    if (dev.sync_attempts >= this.options.autoSyncAttempts) {
      await trx.updateTable("devices").set({ auto_sync_paused: true }).where("id", "=", conn.deviceId).execute();
      return { kind: "paused", settled, desiredHash: dev.desired_hash!, attempts: dev.sync_attempts };
    }
    const org = { id: conn.device.orgId, accountId: conn.device.accountId, name: conn.device.orgName };
    await queueConfigJobs(
      { ...systemCtx(this.deps, org), db: trx },
      {
        deviceIds: [conn.deviceId],
        type: "sync",
        force: true,
        tasks: [
          {
            kind: "auto-sync",
            summary: `automatic re-sync ${dev.sync_attempts + 1}/${this.options.autoSyncAttempts}: device reported ${conn.appliedHash ?? "no config"}, desired ${dev.desired_hash}`,
          },
        ],
      },
    );
    await trx.updateTable("devices").set({ sync_attempts: sql`sync_attempts + 1` }).where("id", "=", conn.deviceId).execute();
    await recordHealingAction(trx, driftOrg, SYSTEM_ACTOR, {
      deviceId: conn.deviceId,
      tunnelId: null,
      kind: "reapply",
      mode: "act",
      source: "server",
      link: "device",
      reason: `the device reports a config hash other than its desired one: automatic re-sync ${drift.attempt}/${this.options.autoSyncAttempts} queued`,
      before: drift,
      after: null,
    });
    this.deps.metrics.autoSyncs.inc({ outcome: "queued" });
    conn.logger.info({ applied: conn.appliedHash, desired: dev.desired_hash }, "device drifted: automatic re-sync queued");
    return { kind: "again", settled };
  }

  /** Sends a started apply (its jobs are running): the dispatcher's, or the first one of a hello (hello-batch.ts). */
  async send(conn: DeviceConnection, plan: SendPlan): Promise<void> {
    // The stored JSON text goes in as it is: the same bytes JSON.stringify of the parsed config would write.
    const text = `{"type":"apply","id":${JSON.stringify(plan.applyId)},"hash":${JSON.stringify(plan.hash)},"config":${plan.configJson}}`;
    if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES) {
      const error: JobError = {
        reason: "too-large",
        message: `the device's config is ${Buffer.byteLength(text)} bytes, over the protocol's ${MAX_MESSAGE_BYTES}`,
        drivers: [],
      };
      const failed = await failApply(this.db, plan.applyId, error);
      this.report(conn, { ...emptySettled(), failed: failed.map((j) => ({ ...j, error })) });
      return;
    }
    const applyId = plan.applyId;
    conn.inFlight = {
      applyId,
      hash: plan.hash,
      sentAt: performance.now(),
      timer: setTimeout(
        () => void conn.serial("apply time-out", () => this.onApplyTimeout(conn, applyId)),
        this.options.jobTimeoutMs,
      ),
    };
    conn.rememberApply(applyId, plan.hash);
    conn.wokenSinceSend = false;
    conn.sendText(text);
    conn.logger.debug({ applyId, hash: plan.hash }, "apply sent");
  }

  /** `apply-result` from the device. */
  async onApplyResult(conn: DeviceConnection, msg: ApplyResult): Promise<void> {
    const sentHash = conn.sentHashOf(msg.id);
    if (sentHash === undefined) {
      conn.reject("unknown-id", "UNKNOWN_ID", `apply-result ${msg.id.slice(0, 80)}: no apply of that id was sent on this link`);
      return;
    }
    const inFlight = conn.inFlight?.applyId === msg.id ? conn.inFlight : null;
    if (inFlight) {
      clearTimeout(inFlight.timer);
      this.deps.metrics.applyRoundTrip.observe(
        { result: msg.ok ? "ok" : "failed" },
        (performance.now() - inFlight.sentAt) / 1000,
      );
      conn.inFlight = null;
    }
    // The instance the link already holds (the apply's) rather than the message's copy of the same text.
    conn.appliedHash = msg.appliedHash === sentHash ? sentHash : msg.appliedHash;
    const { settled, converged } = await this.results.submit({ conn, msg, sentHash });
    if (!msg.ok) conn.logger.warn({ error: msg.error, rolledBack: msg.rolledBack }, "apply failed on the device");
    this.report(conn, settled);
    // The device runs its desired config and nothing was queued since the apply went out (a queued job
    // wakes the link): there is nothing to send and no drift, so the dispatch transaction is skipped.
    if (converged && !conn.wokenSinceSend && conn.inFlight === null) return;
    await this.dispatch(conn);
  }

  /**
   * The results of many devices in one transaction (group commit: results that arrive while one
   * batch is written go together in the next): the devices' rows are locked in id order, their
   * applied hashes stored, the jobs the hashes satisfy completed, and whatever of an apply is still
   * running failed. A few statements per batch instead of six per result.
   */
  private readonly results = new GroupCommit<ResultInput, ResultOutcome>((batch) =>
    this.db.transaction().execute(async (trx) => {
      const desired = new Map(
        (
          await lockDevices(
            trx,
            batch.map((r) => r.conn.deviceId),
          )
            .select(["id", "desired_hash"])
            .execute()
        ).map((d) => [d.id, d.desired_hash]),
      );
      const present = batch.filter((r) => desired.has(r.conn.deviceId));
      if (present.length === 0) return batch.map(() => ({ settled: emptySettled(), converged: false }));
      await sql`update devices set applied_hash = u.hash
        from unnest(${present.map((r) => r.conn.deviceId)}::uuid[], ${present.map((r) => r.msg.appliedHash)}::text[])
          as u(id, hash)
        where devices.id = u.id`.execute(trx);
      const byDevice = await settleJobsByHashMany(
        trx,
        present.flatMap(({ conn, msg }) =>
          msg.appliedHash ? [{ deviceId: conn.deviceId, hash: msg.appliedHash, desiredHash: desired.get(conn.deviceId)! }] : [],
        ),
      );
      // A new config may add or remove tunnels: the device's next reports name them.
      const sides = await loadTunnelSidesMany(
        trx,
        present.filter((r) => r.msg.ok).map((r) => r.conn.deviceId),
      );
      const outcomes = new Map<ResultInput, ResultOutcome>();
      for (const r of present) {
        const { conn, msg } = r;
        // The link's instance of the same text (see onApplyResult), not the message's copy.
        conn.settledHash = msg.appliedHash === conn.appliedHash ? conn.appliedHash : msg.appliedHash;
        const settled: Settled = { ...emptySettled(), ...byDevice.get(conn.deviceId) };
        // Whatever of this apply is still running did not get applied: a failed result, or success with
        // another hash. (Success with the apply's own hash completed all of its jobs just above.)
        if (!msg.ok || msg.appliedHash !== r.sentHash) {
          const error: JobError = msg.ok
            ? {
                reason: "device",
                message: `device reported hash ${msg.appliedHash} after applying another`,
                drivers: msg.drivers,
              }
            : { reason: "device", message: msg.error ?? "apply failed", drivers: msg.drivers };
          settled.failed = (await failApply(trx, msg.id, error)).map((j) => ({ ...j, error }));
        }
        if (msg.ok) {
          conn.tunnelSides = sides.get(conn.deviceId)!;
          conn.tunnelSidesLoadedAt = Date.now();
        }
        const converged = msg.ok && msg.appliedHash !== null && msg.appliedHash === desired.get(conn.deviceId);
        outcomes.set(r, { settled, converged });
      }
      return batch.map((r) => outcomes.get(r) ?? { settled: emptySettled(), converged: false });
    }),
  );

  /** A status (or hello) reports an applied hash different from what the link knew. */
  async onReportedHash(conn: DeviceConnection, hash: string | null): Promise<void> {
    conn.appliedHash = hash;
    const settled = await this.db.transaction().execute(async (trx) => {
      const dev = await lockDevice(trx, conn.deviceId);
      if (!dev) return emptySettled();
      await trx.updateTable("devices").set({ applied_hash: hash }).where("id", "=", conn.deviceId).execute();
      conn.tunnelSides = await loadTunnelSides(trx, conn.deviceId);
      conn.tunnelSidesLoadedAt = Date.now();
      return this.settleByHash(trx, conn, hash, dev.desired_hash);
    });
    // The config in flight is reported applied: its result is no longer needed to finish its jobs.
    if (conn.inFlight && hash === conn.inFlight.hash) {
      clearTimeout(conn.inFlight.timer);
      conn.inFlight = null;
    }
    this.report(conn, settled);
    await this.dispatch(conn);
  }

  private async onApplyTimeout(conn: DeviceConnection, applyId: string): Promise<void> {
    if (conn.inFlight?.applyId !== applyId) return;
    conn.inFlight = null;
    const error: JobError = {
      reason: "timeout",
      message: `no apply-result within ${Math.round(this.options.jobTimeoutMs / 1000)} s`,
      drivers: [],
    };
    const failed = await failApply(this.db, applyId, error);
    conn.logger.warn({ applyId, jobs: failed.length }, "apply timed out");
    this.report(conn, { ...emptySettled(), failed: failed.map((j) => ({ ...j, error })) });
    await this.dispatch(conn);
  }

  /**
   * The link is gone: its apply in flight is no longer awaited. Answers that apply's id, whose running jobs
   * the caller puts back in the queue with the link's end (gateway/link-end-batch.ts), or null.
   */
  releaseLink(conn: DeviceConnection): string | null {
    if (!conn.inFlight) return null;
    clearTimeout(conn.inFlight.timer);
    const { applyId } = conn.inFlight;
    conn.inFlight = null;
    return applyId;
  }
}

export function lockDevice(trx: Db, deviceId: string) {
  return trx.selectFrom("devices").select(["desired_hash"]).where("id", "=", deviceId).forNoKeyUpdate().executeTakeFirst();
}
