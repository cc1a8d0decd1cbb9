/**
 * Migration 20261202-301: `tern_context` names the devices whose rule-engine
 * context changed without a new config (a device's or a peer's name, a
 * tunnel's thresholds or ends), and stays quiet for other writes.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import * as migration from "../../src/db/migrations/20261202-301-notify-context.ts";
import { type Bus, createBus } from "../../src/gateway/bus.ts";
import { insertTestTunnel, insertValidDevice } from "../support/device-fixtures.ts";
import { waitUntil } from "../support/gateway.ts";
import { useTestServer } from "../support/test-server.ts";

describe("migration 20261202-301: tern_context", () => {
  const t = useTestServer();
  let bus: Bus | null = null;
  afterEach(async () => {
    await bus?.close();
    bus = null;
  });

  /** Every tern_context payload from now on, as sets of device ids ("*" as itself). */
  async function listen(): Promise<(Set<string> | "*")[]> {
    const heard: (Set<string> | "*")[] = [];
    bus = createBus(t.database, t.deps.logger, ["tern_context"]);
    bus.on("tern_context", (p) => heard.push(p === "*" ? "*" : new Set(p.split(","))));
    await bus.start();
    return heard;
  }
  const next = (heard: unknown[], n: number) =>
    waitUntil(
      () => heard.length,
      (l) => l >= n,
      5_000,
      `${n} notifications`,
    );

  it("names the devices a rename, a peer's rename or a threshold change concerns, and nothing else", async () => {
    const db = t.database.db;
    const [a, b, c] = [await insertValidDevice(t), await insertValidDevice(t), await insertValidDevice(t)];
    const tunnel = await insertTestTunnel(t, a, b);
    const peerId = randomUUID();
    await db
      .insertInto("peers")
      .values({ id: peerId, organization_id: t.admin.orgId, name: "dc-1", config: toJson({}), psk_enc: "x" })
      .execute();
    await db
      .insertInto("tunnels")
      .values({
        id: randomUUID(),
        organization_id: t.admin.orgId,
        num: 7001,
        device_a: c.id,
        interface_a: c.wan.id,
        peer_id: peerId,
        endpoint_key: `${c.id}:${c.wan.id}|peer:${peerId}`,
        psk_enc: "x",
        notifications: toJson({ rtt: null, dropRate: null }),
      })
      .execute();
    const heard = await listen();

    // A renamed device: its own context and its tunnel's far end.
    await db.updateTable("devices").set({ name: "renamed-a" }).where("id", "=", a.id).execute();
    await next(heard, 1);
    expect(heard[0]).toEqual(new Set([a.id, b.id]));
    // Writes the contexts do not hold are not announced: the next notification is the rename of c.
    await db.updateTable("devices").set({ last_seen_at: new Date() }).where("id", "=", b.id).execute();
    await db.updateTable("devices").set({ name: "renamed-a" }).where("id", "=", a.id).execute();
    await db.updateTable("devices").set({ name: "renamed-c" }).where("id", "=", c.id).execute();
    await next(heard, 2);
    expect(heard[1]).toEqual(new Set([c.id]));
    // A tunnel's thresholds: both ends.
    await db
      .updateTable("tunnels")
      .set({ notifications: toJson({ rtt: { warning: 40, critical: 80 }, dropRate: null }) })
      .where("id", "=", tunnel.id)
      .execute();
    await next(heard, 3);
    expect(heard[2]).toEqual(new Set([a.id, b.id]));
    // A peer's rename: the devices with a tunnel to it.
    await db.updateTable("peers").set({ name: "dc-2" }).where("id", "=", peerId).execute();
    await next(heard, 4);
    expect(heard[3]).toEqual(new Set([c.id]));
    // A deleted tunnel: both ends.
    await db.deleteFrom("tunnels").where("id", "=", tunnel.id).execute();
    await next(heard, 5);
    expect(heard[4]).toEqual(new Set([a.id, b.id]));
    // More devices than a NOTIFY payload holds: every context.
    await sql`select tern_context_changed(array(select gen_random_uuid() from generate_series(1, 201)))`.execute(db);
    await next(heard, 6);
    expect(heard[5]).toBe("*");
    expect(heard).toHaveLength(6);
  });

  it("down removes the triggers and the function; up brings them back", async () => {
    const db = t.database.db;
    const count = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from pg_trigger where tgname like 'tern_context_%'`.execute(db))
        .rows[0]!.n;
    expect(await count()).toBe(3);
    await migration.down(db as never);
    expect(await count()).toBe(0);
    await expect(sql`select tern_context_changed(array[]::uuid[])`.execute(db)).rejects.toThrow();
    await migration.up(db as never);
    expect(await count()).toBe(3);
  });
});
