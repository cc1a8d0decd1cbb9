/**
 * Statistics history storage (services/statistics): the writer's rates from
 * counter deltas (first report has none, a reset or wrap counts what came
 * after it), roll-ups that keep the raw totals and averages, partitions made
 * ahead and retention that drops a whole expired partition and nothing else.
 * On both engines (PGlite and PostgreSQL).
 */
import { randomUUID } from "node:crypto";
import type { InterfaceState, Status } from "@tern/protocol";
import { sql } from "kysely";
import pino from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { dropExpiredPartitions, ensurePartitions, listPartitions } from "../../src/services/statistics/partitions.ts";
import { rollUpHours, rollUpMinutes } from "../../src/services/statistics/rollup.ts";
import { DAY_MS, HOUR_MS } from "../../src/services/statistics/settings.ts";
import { insertHealthRows, insertInterfaceRows, StatisticsWriter } from "../../src/services/statistics/writer.ts";
import { insertTestTunnel } from "../support/device-fixtures.ts";
import { insertTestDevice } from "../support/devices.ts";
import { TEST_STATISTICS_SETTINGS } from "../support/statistics-settings.ts";
import { useTestServer } from "../support/test-server.ts";

const t = useTestServer();
const logger = pino({ level: "silent" });

function iface(devId: string, rx: number, tx: number, extra: Partial<InterfaceState> = {}): InterfaceState {
  return {
    devId,
    name: devId,
    operState: "up",
    IPv4: "",
    IPv4Mask: null,
    gateway: "",
    mac: "",
    mtu: 1500,
    rxBytes: rx,
    txBytes: tx,
    publicIp: "",
    publicPort: null,
    lte: null,
    ...extra,
  };
}
const status = (interfaces: InterfaceState[], extra: Partial<Status> = {}) =>
  ({ interfaces, health: null, bgp: null, vrrp: [], ...extra }) as Pick<Status, "interfaces" | "health" | "bgp" | "vrrp">;

beforeAll(async () => {
  await ensurePartitions(t.database.db, Date.now(), Date.now() - 3 * DAY_MS);
});

describe("statistics storage", () => {
  it("the tables are partitioned by range and partitions exist from the past given to two days ahead", async () => {
    const { rows } = await sql<{ relname: string; strategy: string }>`
      select c.relname, p.partstrat as strategy from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
      where c.relname like 'stat_%' order by 1`.execute(t.database.db);
    expect(rows.map((r) => r.relname)).toEqual([
      "stat_health_1h",
      "stat_health_1m",
      "stat_health_raw",
      "stat_if_1h",
      "stat_if_1m",
      "stat_if_raw",
      "stat_state_changes",
      "stat_tunnel_1h",
      "stat_tunnel_1m",
    ]);
    expect(new Set(rows.map((r) => r.strategy))).toEqual(new Set(["r"]));
    const raw = await listPartitions(t.database.db, "stat_if_raw");
    expect(raw.at(-1)!.start).toBeGreaterThanOrEqual(Date.now() + DAY_MS);
    expect(raw[0]!.start).toBeLessThanOrEqual(Date.now() - 3 * DAY_MS);
    // Idempotent.
    expect(await ensurePartitions(t.database.db)).toBe(0);
  });

  it("rates come from counter deltas: none for the first report, a reset counts from zero, a 32-bit wrap goes round", async () => {
    const org = t.admin.orgId;
    const deviceId = randomUUID();
    const w = new StatisticsWriter(t.database.db, TEST_STATISTICS_SETTINGS, logger);
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    w.record({ deviceId, orgId: org }, status([iface("wan", 1000, 50, { rxPackets: 10, txPackets: 5 })]), at(0));
    w.record({ deviceId, orgId: org }, status([iface("wan", 6000, 150, { rxPackets: 20, txPackets: 6 })]), at(5));
    w.record({ deviceId, orgId: org }, status([iface("wan", 11000, 250, { rxPackets: 30, txPackets: 7 })]), at(10));
    // Reset (router rebooted): 400 bytes since.
    w.record({ deviceId, orgId: org }, status([iface("wan", 400, 2 ** 32 - 100, { rxPackets: 4, txPackets: 8 })]), at(15));
    // tx wraps at 2^32: 100 + 300 = 400 bytes.
    w.record({ deviceId, orgId: org }, status([iface("wan", 900, 300, { rxPackets: 9, txPackets: 9 })]), at(20));
    await w.flush();
    const rows = await t.database.db
      .selectFrom("stat_if_raw")
      .selectAll()
      .where("device_id", "=", deviceId)
      .orderBy("at")
      .execute();
    expect(rows.map((r) => [r.seconds, Number(r.rx_bytes), Number(r.tx_bytes), Number(r.rx_packets), r.rx_errors])).toEqual([
      [10, 10000, 200, 20, null],
      [10, 400 + 500, 2 ** 32 - 100 - 250 + 400, 4 + 5, null],
    ]);
    expect(rows.map((r) => r.at.getTime())).toEqual([at(10).getTime(), at(20).getTime()]);
  });

  it("interfaces and counters that appear later, a long gap and the health means come out as rows", async () => {
    const org = t.admin.orgId;
    const deviceId = randomUUID();
    const w = new StatisticsWriter(t.database.db, TEST_STATISTICS_SETTINGS, logger);
    const t0 = Date.now() - 600_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const health = (cpu: number, memory: number, uptime: number, temp: number | null) =>
      ({
        cpuPercent: cpu,
        memoryPercent: memory,
        diskPercent: 30,
        uptimeSeconds: uptime,
        temperatureC: temp,
      }) as Status["health"];
    const ref = { deviceId, orgId: org };
    w.record(ref, status([iface("wan", 100, 10)], { health: health(10, 20, 100, null) }), at(0));
    // rx packets appear at 4 s: they count from their second report; lte appears at 4 s.
    w.record(
      ref,
      status([iface("wan", 300, 30, { rxPackets: 7 }), iface("lte", 5000, 500)], { health: health(30, 40, 104, 50) }),
      at(4),
    );
    w.record(
      ref,
      status([iface("wan", 600, 60, { rxPackets: 10 }), iface("lte", 5600, 700, { rxErrors: 3 })], {
        health: health(50, 60, 110, 70),
      }),
      at(10),
    );
    // Back after more than 5 minutes: that gap is no rate; the next 10 s are.
    w.record(ref, status([iface("wan", 10_000, 1000)]), at(410));
    w.record(ref, status([iface("wan", 10_100, 1020)]), at(420));
    await w.flush();
    const rows = await t.database.db
      .selectFrom("stat_if_raw")
      .selectAll()
      .where("device_id", "=", deviceId)
      .orderBy("at")
      .orderBy("interface")
      .execute();
    expect(
      rows.map((r) => [
        r.at.getTime(),
        r.interface,
        r.seconds,
        Number(r.rx_bytes),
        Number(r.tx_bytes),
        r.rx_packets === null ? null : Number(r.rx_packets),
        r.rx_errors,
      ]),
    ).toEqual([
      [at(10).getTime(), "lte", 6, 600, 200, null, null],
      [at(10).getTime(), "wan", 10, 500, 50, 3, null],
      [at(420).getTime(), "wan", 10, 100, 20, null, null],
    ]);
    const health1 = await t.database.db.selectFrom("stat_health_raw").selectAll().where("device_id", "=", deviceId).execute();
    expect(
      health1.map((r) => [r.at.getTime(), r.samples, r.cpu, r.cpu_max, r.memory, r.disk, Number(r.uptime), r.temperature]),
    ).toEqual([[at(10).getTime(), 3, 30, 50, 40, 30, 110, 60]]);
  });

  it("BGP and VRRP states are kept as changes: once per change, with the state before", async () => {
    const org = t.admin.orgId;
    const deviceId = randomUUID();
    const bgp = (state: string) =>
      ({
        running: true,
        routerId: "1.1.1.1",
        localASN: 65000,
        neighbors: [{ ip: "10.0.0.2", remoteASN: 65001, state, uptimeSeconds: 1, prefixesReceived: 0, prefixesSent: 0 }],
      }) as Status["bgp"];
    const w1 = new StatisticsWriter(t.database.db, TEST_STATISTICS_SETTINGS, logger);
    const base = Date.now() - 30_000;
    w1.record({ deviceId, orgId: org }, status([], { bgp: bgp("Active") }), new Date(base));
    w1.record({ deviceId, orgId: org }, status([], { bgp: bgp("Established") }), new Date(base + 5000));
    w1.record(
      { deviceId, orgId: org },
      status([], { bgp: bgp("Established"), vrrp: [{ groupId: "g1", state: "BACKUP", since: null }] }),
      new Date(base + 10000),
    );
    await w1.flush();
    // Another instance (a fresh writer) sees the same state: nothing new; then a change.
    const w2 = new StatisticsWriter(t.database.db, TEST_STATISTICS_SETTINGS, logger);
    w2.record(
      { deviceId, orgId: org },
      status([], { bgp: bgp("Established"), vrrp: [{ groupId: "g1", state: "MASTER", since: null }] }),
      new Date(base + 15000),
    );
    await w2.flush();
    const rows = await t.database.db
      .selectFrom("stat_state_changes")
      .select(["kind", "key", "from_state", "to_state"])
      .where("device_id", "=", deviceId)
      .orderBy("at")
      .orderBy("kind")
      .execute();
    expect(rows).toEqual([
      { kind: "bgp", key: "10.0.0.2", from_state: null, to_state: "Active" },
      { kind: "bgp", key: "10.0.0.2", from_state: "Active", to_state: "Established" },
      { kind: "vrrp", key: "g1", from_state: null, to_state: "BACKUP" },
      { kind: "vrrp", key: "g1", from_state: "BACKUP", to_state: "MASTER" },
    ]);
  });

  it("raw rows and state changes are stored exactly as written: large counters, nulls, fractions, awkward names", async () => {
    const db = t.database.db;
    const org = t.admin.orgId;
    const deviceId = randomUUID();
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 - 90_000 + 123);
    const counters = (base: number, nulls: boolean) => ({
      rxBytes: base,
      txBytes: base + 1,
      rxPackets: nulls ? null : 2 ** 40,
      txPackets: nulls ? null : 0,
      rxErrors: nulls ? null : 7,
      txErrors: null,
      rxDrops: nulls ? null : 2 ** 53 - 1,
      txDrops: 3,
    });
    const names = ['wan "0"', "lan\\1", "ü-é\nx", "eth0"];
    await insertInterfaceRows(
      db,
      names.map((name, i) => ({
        at,
        orgId: org,
        deviceId,
        interface: name,
        seconds: 4.75 + i,
        counters: counters(2 ** 40 + i, i % 2 === 1),
      })),
    );
    await insertHealthRows(db, [
      {
        at,
        orgId: org,
        deviceId,
        samples: 3,
        cpu: 12.5,
        cpuMax: 99.25,
        memory: 0.125,
        disk: 100,
        uptime: 2 ** 33 + 0.5,
        temperature: null,
      },
    ]);
    const ifRows = await sql<
      Record<string, unknown>
    >`select at, organization_id, interface, seconds, rx_bytes::text, tx_bytes::text,
        rx_packets::text, tx_packets::text, rx_errors::text, tx_errors::text, rx_drops::text, tx_drops::text
      from stat_if_raw where device_id = ${deviceId} order by interface collate "C"`.execute(db);
    const text = (v: number | null) => (v === null ? null : BigInt(v).toString());
    expect(ifRows.rows).toEqual(
      names
        .map((name, i) => {
          const c = counters(2 ** 40 + i, i % 2 === 1);
          return {
            at,
            organization_id: org,
            interface: name,
            seconds: 4.75 + i,
            rx_bytes: text(c.rxBytes),
            tx_bytes: text(c.txBytes),
            rx_packets: text(c.rxPackets),
            tx_packets: text(c.txPackets),
            rx_errors: text(c.rxErrors),
            tx_errors: null,
            rx_drops: text(c.rxDrops),
            tx_drops: "3",
          };
        })
        .sort((a, b) => (a.interface < b.interface ? -1 : a.interface > b.interface ? 1 : 0)),
    );
    const health = await sql`select at, samples, cpu, cpu_max, memory, disk, uptime, temperature
      from stat_health_raw where device_id = ${deviceId}`.execute(db);
    expect(health.rows).toEqual([
      { at, samples: 3, cpu: 12.5, cpu_max: 99.25, memory: 0.125, disk: 100, uptime: 2 ** 33 + 0.5, temperature: null },
    ]);
    // State changes keyed by awkward keys, one key twice in a batch (written in order).
    const w = new StatisticsWriter(db, TEST_STATISTICS_SETTINGS, logger);
    const vrrp = (groupId: string, state: Status["vrrp"][number]["state"]) => ({ groupId, state, since: null });
    w.record({ deviceId, orgId: org }, status([], { vrrp: [vrrp('g "1"', "BACKUP"), vrrp("g\\ü", "FAULT")] }), at);
    w.record(
      { deviceId, orgId: org },
      status([], { vrrp: [vrrp('g "1"', "MASTER"), vrrp("g\\ü", "FAULT")] }),
      new Date(at.getTime() + 1000),
    );
    await w.flush();
    const changes = await db
      .selectFrom("stat_state_changes")
      .select(["at", "kind", "key", "from_state", "to_state"])
      .where("device_id", "=", deviceId)
      .orderBy("at")
      .orderBy(sql`key collate "C"`)
      .execute();
    expect(changes).toEqual([
      { at, kind: "vrrp", key: 'g "1"', from_state: null, to_state: "BACKUP" },
      { at, kind: "vrrp", key: "g\\ü", from_state: null, to_state: "FAULT" },
      { at: new Date(at.getTime() + 1000), kind: "vrrp", key: 'g "1"', from_state: "BACKUP", to_state: "MASTER" },
    ]);
  });

  it("minute and hour roll-ups keep the raw totals, weighted averages and maxima", async () => {
    const db = t.database.db;
    const org = t.admin.orgId;
    const devices = [randomUUID(), randomUUID()];
    // Three whole hours, 2 to 5 hours ago, aligned to the hour.
    const start = Math.floor((Date.now() - 5 * HOUR_MS) / HOUR_MS) * HOUR_MS;
    const end = start + 3 * HOUR_MS;
    let seed = 7;
    const rnd = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const ifRows = [];
    const healthRows = [];
    for (let at = start + 7_000; at < end; at += 23_000)
      for (const deviceId of devices) {
        for (const name of ["wan", "lan"])
          ifRows.push({
            at: new Date(at),
            orgId: org,
            deviceId,
            interface: name,
            seconds: 23,
            counters: {
              rxBytes: Math.floor(rnd() * 1e7),
              txBytes: Math.floor(rnd() * 1e6),
              rxPackets: Math.floor(rnd() * 1e4),
              txPackets: Math.floor(rnd() * 1e3),
              rxErrors: name === "wan" ? Math.floor(rnd() * 3) : null,
              txErrors: null,
              rxDrops: 1,
              txDrops: 0,
            },
          });
        const samples = 1 + Math.floor(rnd() * 5);
        healthRows.push({
          at: new Date(at),
          orgId: org,
          deviceId,
          samples,
          cpu: Math.round(rnd() * 1000) / 10,
          cpuMax: 100,
          memory: Math.round(rnd() * 1000) / 10,
          disk: 40,
          uptime: at / 1000,
          temperature: rnd() > 0.5 ? 50 : null,
        });
      }
    await insertInterfaceRows(db, ifRows);
    await insertHealthRows(db, healthRows);
    // Tunnel samples of a real tunnel (the roll-up takes the tunnel's organization).
    const a = await insertTestDevice(t);
    const b = await insertTestDevice(t);
    const tunnel = await insertTestTunnel(t, a, b);
    const samples = [];
    for (let at = start + 1000; at < end; at += 17_000)
      samples.push({
        tunnel_id: tunnel.id,
        device_id: a.id,
        side: "a" as const,
        at: new Date(at),
        up: rnd() > 0.1,
        loss: Math.round(rnd() * 100) / 10,
        rtt: Math.round(rnd() * 800) / 10,
        jitter: Math.round(rnd() * 50) / 10,
        samples: 10,
      });
    await db.insertInto("tunnel_samples").values(samples).execute();

    await sql`delete from stat_rollup_progress`.execute(db);
    await db
      .insertInto("stat_rollup_progress")
      .values({ name: "minute", done_until: new Date(start) })
      .execute();
    // Runs as the duty would, the clock moving on: each run takes at most its batch of closed minutes.
    for (let now = start + 40 * 60_000; now <= end + 60_000; now += 40 * 60_000) await rollUpMinutes(db, new Date(now), 0);
    await rollUpMinutes(db, new Date(end + 60_000), 0);
    while (await rollUpHours(db));

    const inRange = (table: string, col: string) =>
      sql.raw(`${table} where ${col} >= '${new Date(start).toISOString()}' and ${col} < '${new Date(end).toISOString()}'`);
    const sums = async (table: string, col: string) =>
      (
        await sql<Record<string, string>>`select sum(rx_bytes)::text rx, sum(tx_bytes)::text tx, sum(rx_packets)::text rxp,
          sum(rx_errors)::text rxe, sum(tx_errors)::text txe, sum(seconds)::float8::text s from ${inRange(table, col)}`.execute(
          db,
        )
      ).rows[0];
    const raw = await sums("stat_if_raw", "at");
    expect(await sums("stat_if_1m", "bucket")).toEqual(raw);
    expect(await sums("stat_if_1h", "bucket")).toEqual(raw);
    expect(raw!.txe).toBeNull();

    const healthRaw = (
      await sql<{
        cpu: number;
        mem: number;
        n: string;
        temp: number;
        cpumax: number;
      }>`select sum(cpu * samples) / sum(samples) cpu,
        sum(memory * samples) / sum(samples) mem, sum(samples)::text n, sum(temperature * samples) / sum(samples) filter (where temperature is not null) temp,
        max(cpu_max) cpumax from ${inRange("stat_health_raw", "at")}`.execute(db)
    ).rows[0]!;
    for (const table of ["stat_health_1m", "stat_health_1h"]) {
      const r = (
        await sql<{ cpu: number; mem: number; n: string; temp: number; cpumax: number }>`select sum(cpu_sum) / sum(samples) cpu,
          sum(memory_sum) / sum(samples) mem, sum(samples)::text n, sum(temperature_sum) / sum(temperature_samples) temp, max(cpu_max) cpumax
          from ${inRange(table, "bucket")}`.execute(db)
      ).rows[0]!;
      expect(r.n).toBe(healthRaw.n);
      expect(r.cpu).toBeCloseTo(healthRaw.cpu, 3);
      expect(r.mem).toBeCloseTo(healthRaw.mem, 3);
      expect(r.temp).toBeCloseTo(healthRaw.temp, 3);
      expect(r.cpumax).toBe(healthRaw.cpumax);
    }
    const tunnelRaw = (
      await sql<{
        n: string;
        up: string;
        loss: number;
        rtt: number;
        rttmax: number;
      }>`select count(*)::text n, count(*) filter (where up)::text up,
        avg(loss) loss, avg(rtt) rtt, max(rtt) rttmax from ${inRange("tunnel_samples", "at")} and tunnel_id = ${tunnel.id}`.execute(
        db,
      )
    ).rows[0]!;
    for (const table of ["stat_tunnel_1m", "stat_tunnel_1h"]) {
      const r = (
        await sql<{
          n: string;
          up: string;
          loss: number;
          rtt: number;
          rttmax: number;
        }>`select sum(samples)::text n, sum(up_samples)::text up,
          sum(loss_sum) / sum(samples) loss, sum(rtt_sum) / sum(samples) rtt, max(rtt_max) rttmax
          from ${inRange(table, "bucket")} and tunnel_id = ${tunnel.id} and organization_id = ${t.admin.orgId}`.execute(db)
      ).rows[0]!;
      expect(r.n).toBe(tunnelRaw.n);
      expect(r.up).toBe(tunnelRaw.up);
      expect(r.loss).toBeCloseTo(tunnelRaw.loss, 3);
      expect(r.rtt).toBeCloseTo(tunnelRaw.rtt, 3);
      expect(r.rttmax).toBeCloseTo(tunnelRaw.rttmax, 3);
    }
    // 3 hours × 2 devices × 2 interfaces: one hour row each.
    const hourRows = await db
      .selectFrom("stat_if_1h")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("device_id", "in", devices)
      .executeTakeFirst();
    expect(Number(hourRows!.n)).toBe(12);
    // Nothing is rolled up twice: another run changes nothing.
    await rollUpMinutes(db, new Date(end + 60_000), 0);
    await rollUpHours(db);
    expect(await sums("stat_if_1h", "bucket")).toEqual(raw);
  });

  it("retention drops a whole expired partition and nothing else", async () => {
    const db = t.database.db;
    const org = t.admin.orgId;
    const deviceId = randomUUID();
    const now = Date.now();
    const old = Math.floor((now - 30 * HOUR_MS) / HOUR_MS) * HOUR_MS; // a raw partition past the 24 h retention
    const row = (at: number) => ({
      at: new Date(at),
      orgId: org,
      deviceId,
      interface: "wan",
      seconds: 10,
      counters: {
        rxBytes: 1,
        txBytes: 1,
        rxPackets: null,
        txPackets: null,
        rxErrors: null,
        txErrors: null,
        rxDrops: null,
        txDrops: null,
      },
    });
    await insertInterfaceRows(db, [row(old + 1000), row(old + 2000), row(now - HOUR_MS), row(now - 23 * HOUR_MS)]);
    const minuteBefore = await db
      .selectFrom("stat_if_1m")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .executeTakeFirst();
    const expired = `stat_if_raw_p${new Date(old).toISOString().slice(0, 13).replace(/[-T]/g, "")}`;
    expect((await listPartitions(db, "stat_if_raw")).map((p) => p.name)).toContain(expired);

    const dropped = await dropExpiredPartitions(db, TEST_STATISTICS_SETTINGS, now);
    expect(dropped).toContain(expired);
    // Only raw partitions older than 24 h, and the minute/hour tiers' within their 7/90 days are kept.
    for (const name of dropped) expect(name).toMatch(/^stat_(if|health)_raw_p/);
    expect((await listPartitions(db, "stat_if_raw")).map((p) => p.name)).not.toContain(expired);
    const left = await db.selectFrom("stat_if_raw").select("at").where("device_id", "=", deviceId).orderBy("at").execute();
    expect(left.map((r) => r.at.getTime())).toEqual([now - 23 * HOUR_MS, now - HOUR_MS]);
    const minuteAfter = await db
      .selectFrom("stat_if_1m")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .executeTakeFirst();
    expect(minuteAfter!.n).toBe(minuteBefore!.n);
    expect(await dropExpiredPartitions(db, TEST_STATISTICS_SETTINGS, now)).toEqual([]);
  });

  it("a row with no partition yet makes its partitions and is written", async () => {
    const db = t.database.db;
    // Older than the partitions made so far (as if the partition duty had not run since).
    const past = Date.now() - 5 * DAY_MS;
    const w = new StatisticsWriter(db, { rawIntervalMs: 1000 }, logger);
    const deviceId = randomUUID();
    w.record({ deviceId, orgId: t.admin.orgId }, status([iface("wan", 0, 0)]), new Date(past));
    w.record({ deviceId, orgId: t.admin.orgId }, status([iface("wan", 10, 10)]), new Date(past + 2000));
    await w.flush();
    expect(w.counts.interfaceRows).toBe(1);
  });
});
