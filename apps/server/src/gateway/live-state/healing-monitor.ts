/**
 * Healing on the server side (docs/healing.md), fed by every `status`:
 * - records what the agent healed by itself (`status.healing`: stuck SAs,
 *   damped links), once per report, with its audit entry;
 * - learns the baseline of each tunnel and WAN link the device reports (the
 *   same figures the server stores as samples) and, when a link stays
 *   anomalous against it, steers the device's traffic off it: in mode `act`
 *   the link goes into the device config's `healing.avoid` (the policy driver
 *   then prefers any other eligible link), in `suggest` the action is only
 *   recorded. When the link is back to normal the detour ends and the
 *   action gets its "after" figures.
 * A device's link lives on one instance, so its baselines have one writer:
 * they are kept in memory (the overall statistics and the current hour's,
 * `healing-link.ts`) and written every PERSIST_MS (and at each event) to
 * `healing_baselines`, with the other devices' due within PERSIST_WINDOW_MS
 * in one statement; a new link starts from there and a link reads the
 * hour's statistics from there when the hour turns.
 */
import type { HealingMode, Status, TunnelReport } from "@tern/protocol";
import { sql } from "kysely";
import type { Actor, OrgRef } from "../../auth/access.ts";
import { SYSTEM_ACTOR } from "../../auth/access.ts";
import { batchLookup } from "../../db/batch-lookup.ts";
import { GroupCommit } from "../../db/group-commit.ts";
import { toJson } from "../../db/json.ts";
import type { AppDeps } from "../../deps.ts";
import { sharedString } from "../../memory/shared-string.ts";
import { systemCtx } from "../../services/context.ts";
import { anyUuid, queueConfigJobs } from "../../services/desired-config.ts";
import { completeHealingAction, recordHealingAction } from "../../services/healing/actions.ts";
import type { Figures, Metric, Stat } from "../../services/healing/baseline.ts";
import { healingModeOf } from "../../services/healing/settings.ts";
import type { DeviceConnection } from "../connection.ts";
import { HealingLink, mergeStoredState, tunnelIdOf } from "./healing-link.ts";

const PERSIST_MS = 60_000;
/**
 * Devices' baselines written within this window go in one statement. Each device's minute comes round at
 * its own time: at 10,000 devices one INSERT per device was 167 statements a second, a third of all the
 * server ran at steady state; now about one.
 */
const PERSIST_WINDOW_MS = 1_000;
/** Devices per baselines statement (each with its few links). */
const PERSIST_BATCH = 250;

interface BaselineRow {
  device_id: string;
  link: string;
  organization_id: string;
  state: string;
}
const MODE_CACHE_MS = 30_000;
/** Agent clocks may be off: an action's time is the agent's only when within this of the server's. */
const CLOCK_TRUST_MS = 300_000;

interface DeviceHealing {
  loaded: boolean;
  links: Map<string, HealingLink>;
  /** Whether a link learnt anything since the last write (its own `dirty` says which). */
  dirty: boolean;
  persistedAt: number;
  /** Agent reports already recorded (`<id>` and `<id>+after`); made at the first. */
  seen: Set<string> | null;
  /** The applied hash of the last status: a new one may complete a `reapply` action. */
  appliedHash: string | null | undefined;
  mode: { value: HealingMode; at: number } | null;
}

export class HealingMonitor {
  private readonly devices = new WeakMap<DeviceConnection, DeviceHealing>();
  /**
   * A link's first status reads its baselines and its open re-apply actions: the devices of a
   * reconnecting fleet do so together, so the look-ups are batched (one statement per batch).
   */
  private readonly baselines = batchLookup(
    (ids) =>
      this.deps.db
        .selectFrom("healing_baselines")
        .select(["device_id", "link", "state", "rerouting"])
        .where("device_id", "=", anyUuid(ids))
        .execute(),
    (r) => r.device_id,
  );
  private readonly openReapplies = batchLookup(
    (ids) =>
      this.deps.db
        .selectFrom("healing_actions")
        .select(["id", "device_id", sql<string | null>`before ->> 'desiredHash'`.as("hash")])
        .where("device_id", "=", anyUuid(ids))
        .where("kind", "=", "reapply")
        .where("mode", "=", "act")
        .where("after", "is", null)
        .execute(),
    (r) => r.device_id,
  );

  /** The stored statistics of one hour of day, per hour (a fleet's links turn to a new hour together). */
  private readonly hourLookups = new Map<number, ReturnType<typeof this.hourLookup>>();

  constructor(private readonly deps: AppDeps) {}

  private hourLookup(hour: number) {
    const h = sql.lit(String(hour));
    return batchLookup(
      (ids) =>
        this.deps.db
          .selectFrom("healing_baselines")
          .select([
            "device_id",
            "link",
            sql<Partial<Record<Metric, Stat>> | null>`jsonb_build_object(
              'rtt', state -> 'baseline' -> 'rtt' -> 'hours' -> ${h},
              'loss', state -> 'baseline' -> 'loss' -> 'hours' -> ${h},
              'jitter', state -> 'baseline' -> 'jitter' -> 'hours' -> ${h})`.as("stats"),
          ])
          .where("device_id", "=", anyUuid(ids))
          .execute(),
      (r) => r.device_id,
    );
  }

  /** Baselines of the devices whose minute came round together, as one upsert (a key's newest row wins). */
  private readonly writes = new GroupCommit<BaselineRow[], void>(
    async (batch) => {
      const rows = new Map<string, BaselineRow>();
      for (const r of batch.flat()) rows.set(`${r.device_id}|${r.link}`, r);
      await this.deps.db
        .insertInto("healing_baselines")
        .values([...rows.values()])
        .onConflict((oc) => oc.columns(["device_id", "link"]).doUpdateSet({ state: mergeStoredState(), updated_at: new Date() }))
        .execute();
      return batch.map(() => undefined);
    },
    PERSIST_BATCH,
    PERSIST_WINDOW_MS,
  );

  /** The device's healing state; a new one loads the stored baselines as of `at`'s hour (the status that made it). */
  private stateOf(conn: DeviceConnection, at = new Date()): DeviceHealing {
    let s = this.devices.get(conn);
    if (!s) {
      s = {
        loaded: false,
        links: new Map(),
        dirty: false,
        persistedAt: Date.now(),
        seen: null,
        mode: null,
        appliedHash: undefined,
      };
      this.devices.set(conn, s);
      const state = s;
      const hour = at.getUTCHours();
      void conn.serial("healing baselines", () => this.load(conn, state, hour));
    }
    return s;
  }

  private org(conn: DeviceConnection): OrgRef {
    return { id: conn.device.orgId, accountId: conn.device.accountId, name: conn.device.orgName };
  }

  private deviceActor(conn: DeviceConnection): Actor {
    return { kind: "device", label: `device:${conn.deviceId}`, userId: null, tokenId: null };
  }

  /** One status (after its tunnels were narrowed to the device's own). */
  observe(conn: DeviceConnection, status: Status, tunnels: (TunnelReport & { side: "a" | "b" })[], receivedAt: Date): void {
    const s = this.stateOf(conn, receivedAt);
    this.recordAgentReports(conn, s, status, receivedAt);
    if (status.appliedHash !== s.appliedHash) {
      s.appliedHash = status.appliedHash;
      const hash = status.appliedHash;
      if (hash) void conn.serial("healing reapply", () => this.completeReapply(conn, hash));
    }
    if (!s.loaded) return;
    const hour = receivedAt.getUTCHours();
    let turned = false;
    // Tunnels and WAN links stepped in place (HealingLink.step): a status makes no objects here unless an event does.
    const step = (key: string, up: boolean, samples: number, figures: Figures) => {
      // A link that is down is the probes' and the policy's business; a baseline learns quality only.
      if (!up || samples === 0) return;
      let link = s.links.get(key);
      if (!link) {
        link = new HealingLink(hour);
        s.links.set(sharedString(key), link);
      } else if (link.hour !== hour) {
        link.turnTo(hour);
        turned = true;
      }
      const event = link.step(figures, receivedAt);
      link.dirty = true;
      s.dirty = true;
      if (event) {
        const l = link;
        void conn.serial("healing decision", () => this.decide(conn, s, key, l, event.kind, event.evidence));
      }
    };
    for (const t of tunnels) step(`tunnel:${t.id}`, t.up, t.samples, t);
    for (const l of status.links ?? []) step(`wan:${l.name}`, l.up, l.samples, l);
    if (turned) void conn.serial("healing hour", () => this.loadHour(conn, s, hour));
    if (Date.now() - s.persistedAt > PERSIST_MS && s.dirty) {
      s.persistedAt = Date.now();
      // Not in the device's serial chain: the write waits for its batch, and nothing of the device waits for it.
      this.persist(conn, s).catch((err) =>
        conn.logger.warn({ err }, "healing baselines not written: written at the next persist"),
      );
    }
  }

  private recordAgentReports(conn: DeviceConnection, s: DeviceHealing, status: Status, receivedAt: Date): void {
    for (const r of status.healing ?? []) {
      const key = r.after ? `${r.id}+after` : r.id;
      s.seen ??= new Set();
      if (s.seen.has(key)) continue;
      s.seen.add(key);
      if (s.seen.size > 1000) s.seen.delete(s.seen.values().next().value!);
      const tunnelId = tunnelIdOf(r.link);
      const at = new Date(r.at);
      const trusted = Math.abs(at.getTime() - receivedAt.getTime()) < CLOCK_TRUST_MS;
      void conn.serial("healing report", async () => {
        await recordHealingAction(this.deps.db, this.org(conn), this.deviceActor(conn), {
          deviceId: conn.deviceId,
          // Only the device's own tunnels are named; anything else stays in `link`.
          tunnelId: tunnelId && conn.tunnelSides.has(tunnelId) ? tunnelId : null,
          kind: r.kind,
          mode: r.suggested ? "suggest" : "act",
          source: "agent",
          link: r.link,
          reason: r.reason,
          before: r.before,
          after: r.after,
          agentRef: r.id,
          at: trusted ? at : receivedAt,
        });
      });
    }
  }

  /** A re-apply whose desired hash the device now reports applied gets its "after" figures. */
  private async completeReapply(conn: DeviceConnection, hash: string): Promise<void> {
    const open = (await this.openReapplies.submit(conn.deviceId)).filter((a) => a.hash === hash);
    for (const a of open)
      await completeHealingAction(this.deps.db, this.org(conn), SYSTEM_ACTOR, a.id, { reportedHash: hash, inSync: true });
  }

  private async mode(conn: DeviceConnection, s: DeviceHealing): Promise<HealingMode> {
    if (s.mode && Date.now() - s.mode.at < MODE_CACHE_MS) return s.mode.value;
    const value = await healingModeOf(this.deps.db, conn.device.orgId);
    s.mode = { value, at: Date.now() };
    return value;
  }

  /** A link became degraded or recovered: record (and in mode `act` apply) the detour. */
  private async decide(
    conn: DeviceConnection,
    s: DeviceHealing,
    key: string,
    link: HealingLink,
    kind: "degraded" | "recovered",
    evidence: Record<string, number>,
  ): Promise<void> {
    const mode = await this.mode(conn, s);
    const org = this.org(conn);
    if (kind === "degraded") {
      if (mode === "off") return;
      const metrics = Object.keys(evidence)
        .filter((k) => !k.endsWith("Baseline") && !k.endsWith("Sd"))
        .map((m) => `${m} ${evidence[m]} (baseline ${evidence[`${m}Baseline`]} ± ${evidence[`${m}Sd`]})`)
        .join(", ");
      const { id } = await this.deps.db.transaction().execute(async (trx) => {
        const recorded = await recordHealingAction(trx, org, SYSTEM_ACTOR, {
          deviceId: conn.deviceId,
          tunnelId: tunnelIdOf(key),
          kind: "reroute",
          mode: mode === "act" ? "act" : "suggest",
          source: "server",
          link: key,
          reason: `${key} anomalous against its learned baseline for 3 reports in a row: ${metrics}; traffic preferred on other links`,
          before: evidence,
          after: null,
        });
        if (mode === "act") await this.setRerouting(trx, conn, key, link, true);
        return recorded;
      });
      link.openActionId = id;
      link.dirty = true;
      s.dirty = true;
      conn.logger.info({ link: key, mode, evidence }, "healing: link degraded against its baseline");
      return;
    }
    const open = link.openActionId;
    link.openActionId = null;
    await this.deps.db.transaction().execute(async (trx) => {
      if (open) await completeHealingAction(trx, org, SYSTEM_ACTOR, open, evidence);
      await this.setRerouting(trx, conn, key, link, false);
    });
    conn.logger.info({ link: key, evidence }, "healing: link back to its baseline");
  }

  /** Stores the link's state with its rerouting flag and recompiles the device (its `healing.avoid` changes). */
  private async setRerouting(
    trx: AppDeps["db"],
    conn: DeviceConnection,
    key: string,
    link: HealingLink,
    rerouting: boolean,
  ): Promise<void> {
    await trx
      .insertInto("healing_baselines")
      .values({
        device_id: conn.deviceId,
        link: key,
        organization_id: conn.device.orgId,
        state: toJson(link.stored(key)),
        rerouting,
      })
      .onConflict((oc) =>
        oc.columns(["device_id", "link"]).doUpdateSet({ state: mergeStoredState(), rerouting, updated_at: new Date() }),
      )
      .execute();
    await queueConfigJobs(
      { ...systemCtx(this.deps, this.org(conn)), db: trx },
      {
        deviceIds: [conn.deviceId],
        type: "modify",
        tasks: [{ kind: "healing", summary: `${rerouting ? "avoid" : "use again"} ${key} (learned baseline)` }],
      },
    );
  }

  private async load(conn: DeviceConnection, s: DeviceHealing, hour: number): Promise<void> {
    try {
      const rows = await this.baselines.submit(conn.deviceId);
      for (const r of rows) s.links.set(sharedString(r.link), HealingLink.fromStored(r.state, r.rerouting, hour));
    } finally {
      s.loaded = true;
    }
  }

  /** The stored statistics of the hour the device's links turned to. */
  private async loadHour(conn: DeviceConnection, s: DeviceHealing, hour: number): Promise<void> {
    let lookup = this.hourLookups.get(hour);
    if (!lookup) {
      lookup = this.hourLookup(hour);
      this.hourLookups.set(hour, lookup);
    }
    const stored = new Map((await lookup.submit(conn.deviceId)).map((r) => [r.link, r.stats ?? {}]));
    for (const [key, link] of s.links) if (link.hour === hour && !link.hourKnown) link.setHour(stored.get(key) ?? {});
  }

  /**
   * Writes the baselines that changed since the last write (rerouting flags are written by decisions only),
   * with those of other devices due within PERSIST_WINDOW_MS. A failed write marks them changed again.
   */
  async persist(conn: DeviceConnection, s: DeviceHealing = this.stateOf(conn)): Promise<void> {
    s.dirty = false;
    const rows: BaselineRow[] = [];
    for (const [k, l] of s.links) {
      if (!l.dirty) continue;
      l.dirty = false;
      rows.push({ device_id: conn.deviceId, link: k, organization_id: conn.device.orgId, state: toJson(l.stored(k)) });
    }
    if (rows.length === 0) return;
    try {
      await this.writes.submit(rows);
    } catch (err) {
      for (const r of rows) {
        const l = s.links.get(r.link);
        if (l) l.dirty = true;
      }
      s.dirty = true;
      throw err;
    }
  }
}
