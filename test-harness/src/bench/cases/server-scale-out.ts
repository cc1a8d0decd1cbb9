/**
 * Issue 14, "Scale-out on an existing engine": Tern's server as several
 * stateless instances on ONE PostgreSQL database behind Debian's HAProxy,
 * read against ONE instance behind the same proxy, same fleet, same load, in
 * the same run (this case at `instances: 1` is the baseline of the case at 4).
 *
 * Each measurement: seed N configured devices, start the instances and the
 * proxy, bring the fleet online through the proxy (websocket upgrade,
 * leastconn), a quiet window of statuses (per-device costs: RSS, CPU,
 * PostgreSQL transactions and rows), the API endpoints of server-api through
 * the proxy (50 clients), then a fan-out through the proxy whose jobs are
 * counted by the instance that served the request against the instance that
 * holds each device's link. With several instances, a second fan-out is
 * followed at once by `kill -9` of one instance: its devices reconnect to the
 * others (timed), every job of that fan-out is checked in the database
 * (complete, one per device) and on the devices (no config received twice),
 * and the API is measured again on the survivors.
 */
import pg from "pg";
import type { Worker } from "../child.ts";
import { spawnWorker, workerPath } from "../child.ts";
import { formatValue } from "../format.ts";
import { readProcUsage } from "../proc-usage.ts";
import { fleetSizes, waitFor } from "../server/connect.ts";
import { benchIdentitySeed, FLEET_PREFIX } from "../server/fleet-plan.ts";
import { haproxyBinary, linksPerProxy, type RunningHaproxy, startHaproxy } from "../server/haproxy.ts";
import { ADMIN_EMAIL, ADMIN_PASSWORD } from "../server/seed.ts";
import { type Fleet, scratchDatabase, seedScratch, startTern, type TernServer } from "../server/tern.ts";
import { summarize } from "../stats.ts";
import { type BenchCase, type BenchContext, type Figure, type Params, SkipCase } from "../types.ts";
import { API_ENDPOINTS } from "./server-api.ts";
import { sleep, stopAll } from "./util.ts";

export interface ServerScaleOutParams extends Params {
  devices: number;
  instances: number;
  /** Per API endpoint. */
  windowMs: number;
}

const STATUS_INTERVAL_MS = 10_000;
const API_CLIENTS = 50;

interface LoadResult {
  requests: number;
  perSec: number;
  errors: number;
  firstError: string | null;
  statuses: Record<string, number>;
  /** null when no request completed in the window (NaN through the worker's IPC). */
  p50: number | null;
  p99: number | null;
}

/** Tern instance i as HAProxy knows it. */
const serverName = (i: number) => `tern${i}`;

async function sessionsByPid(db: pg.Pool): Promise<Map<number, number>> {
  const r = await db.query<{ pid: number; n: number }>(
    `select i.pid, count(s.device_id)::int as n from gateway_instances i
       left join device_sessions s on s.instance_id = i.id group by i.pid`,
  );
  return new Map(r.rows.map((x) => [Number(x.pid), x.n]));
}

async function instanceIdsByPid(db: pg.Pool): Promise<Map<number, string>> {
  const r = await db.query<{ id: string; pid: number }>("select id, pid from gateway_instances");
  return new Map(r.rows.map((x) => [Number(x.pid), x.id]));
}

async function login(url: string): Promise<string> {
  const res = await fetch(`${url}/api/users/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  if (!res.ok) throw new Error(`login: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { accessToken: string }).accessToken;
}

/** An API call through the proxy; also which instance served it (HAProxy's X-Tern-Served-By). */
async function call<T>(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ body: T; servedBy: string | null }> {
  const res = await fetch(`${url}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return { body: (text ? JSON.parse(text) : null) as T, servedBy: res.headers.get("x-tern-served-by") };
}

function cpuSeconds(pids: number[]): number {
  let s = 0;
  for (const pid of pids) s += readProcUsage(pid).cpuSeconds;
  return s;
}

function rssBytes(pids: number[]): number {
  let s = 0;
  for (const pid of pids) s += readProcUsage(pid).rssBytes;
  return s;
}

interface ApiPhase {
  byEndpoint: Record<string, LoadResult>;
  /** Server CPU (all live instances) per request, ms. */
  cpuMsPerRequest: number;
}

async function apiPhase(
  load: Worker,
  proxyUrl: string,
  token: string,
  pids: number[],
  windowMs: number,
  ctx: BenchContext,
  label: string,
): Promise<ApiPhase> {
  const headers = { authorization: `Bearer ${token}` };
  const byEndpoint: Record<string, LoadResult> = {};
  let cpu = 0;
  let requests = 0;
  for (const e of API_ENDPOINTS) {
    const url = `${proxyUrl}${e.path}`;
    const probe = await load.call<{ status: number }>("probe", { url, headers });
    if (probe.status !== 200) throw new Error(`${e.label}: HTTP ${probe.status}`);
    const c0 = cpuSeconds(pids);
    const r = await load.call<LoadResult>("run", { url, headers, concurrency: API_CLIENTS, durationMs: windowMs }, 300_000);
    cpu += cpuSeconds(pids) - c0;
    requests += r.requests;
    byEndpoint[e.key] = r;
    ctx.log(
      `  ${label} ${e.label}: p50 ${formatValue(r.p50, "ms")}, p99 ${formatValue(r.p99, "ms")}, ${r.perSec.toFixed(0)} req/s`,
    );
  }
  return { byEndpoint, cpuMsPerRequest: requests ? (cpu * 1000) / requests : Number.NaN };
}

interface FanoutResult {
  ids: string[];
  jobs: number;
  servedBy: number;
  requestMs: number;
  completeMs: number;
  perJob: ReturnType<typeof summarize>;
  /** Jobs whose device's link was on another instance than the one that served the request. */
  crossInstance: number;
  crossInstanceComplete: number;
  states: Record<string, number>;
}

async function jobStates(db: pg.Pool, ids: string[]): Promise<Record<string, number>> {
  const r = await db.query<{ state: string; n: number }>(
    "select state, count(*)::int as n from jobs where id = any($1::uuid[]) group by state",
    [ids],
  );
  return Object.fromEntries(r.rows.map((x) => [x.state, x.n]));
}

export const serverScaleOut: BenchCase<ServerScaleOutParams> = {
  name: "server-scale-out",
  kind: "server",
  title: "Tern scale-out: 4 instances on one PostgreSQL behind HAProxy, against one instance; kill -9 of one",
  description:
    "A scratch PostgreSQL database is seeded with N configured devices (4 tunnels each); `instances` Tern servers (own " +
    "processes, TERN_TRUST_PROXY) run on it behind Debian's HAProxy (device websockets balanced leastconn, API requests " +
    "roundrobin, TCP health checks, a killed instance out at its first refused connection; the configuration is docs/scale.md's example). The fleet comes online through the " +
    "proxy (status every 10 s), then: a 10 s quiet window (RSS per device, server CPU per status, PostgreSQL transactions and " +
    "rows), the server-api endpoints through the proxy with 50 clients, and a fan-out (`POST /api/mlpolicies/{id}/install`) " +
    "through the proxy, counting jobs whose device is connected to another instance than the one that served the request. " +
    "With several instances, a second fan-out is followed at once by kill -9 of one instance: time until its devices are " +
    "online on the others, every job of that fan-out checked (complete, one per device, no config received twice), the API " +
    "measured again. Baseline: the same case with one instance behind the same proxy, in the same run.",
  sizes: (mode) =>
    fleetSizes(mode)
      .slice(-1)
      .map((devices) => ({ devices, instances: 4, windowMs: mode === "quick" ? 3000 : 10_000 })),
  async run(params, ctx) {
    if (!haproxyBinary()) throw new SkipCase("haproxy is not installed (Debian: apt-get install haproxy)");
    const n = params.devices;
    const scratch = await scratchDatabase("pg", ctx);
    const db = new pg.Pool({ connectionString: scratch.url, max: 2 });
    const servers: TernServer[] = [];
    const proxies: RunningHaproxy[] = [];
    const sims: Worker[] = [];
    let load: Worker | undefined;
    const notes: string[] = [];
    const details: Record<string, unknown> = {};
    try {
      const fleet = await seedScratch(scratch, { devices: n, configure: true }, ctx);
      // One after the other: on a busy machine several tsx workers compiling at once miss their ready time-out.
      for (let i = 0; i < params.instances; i++) servers.push(await startTern(fleet, ctx, { TERN_TRUST_PROXY: "true" }));
      const pids = servers.map((s) => s.pid);
      const rssIdle = rssBytes(pids);
      // One HAProxy holds at most linksPerProxy() links within the file-descriptor limit; a larger fleet
      // is spread over several identical proxies (load-balancer nodes), each in front of every instance.
      const capacity = linksPerProxy();
      const proxyCount = Math.ceil((n + API_CLIENTS + 50) / capacity);
      for (let k = 0; k < proxyCount; k++)
        proxies.push(
          await startHaproxy(
            servers.map((s, i) => ({ name: serverName(i), host: "127.0.0.1", port: Number(new URL(s.url).port) })),
            ctx.env.tmpDir,
            capacity,
          ),
        );
      const proxy = proxies[0]!;
      details.haproxyConfig = proxy.config;
      details.proxies = proxyCount;
      ctx.log(
        `  ${params.instances} instance(s) behind ${proxyCount} HAProxy process(es) (${capacity} links each) at ${proxies.map((p) => p.url).join(", ")}`,
      );
      const ramp = await rampThroughProxies(fleet, proxies, sims, servers[0]!, ctx);
      details.ramp = ramp;
      const allSims = async <T>(cmd: string): Promise<T[]> => Promise.all(sims.map((w) => w.call<T>(cmd)));
      const spread = await sessionsByPid(db);
      details.devicesPerInstance = pids.map((p) => spread.get(p) ?? 0);
      ctx.log(
        `  ${n} devices online in ${(ramp.onlineMs / 1000).toFixed(1)} s, per instance ${JSON.stringify(details.devicesPerInstance)}`,
      );

      // Quiet window: only statuses (one per device per 10 s). Per-device costs for docs/scale.md.
      // Settle first: the ramp's last transactions and PostgreSQL's statistics (flushed by each backend within seconds).
      await sleep(5000);
      await Promise.all(servers.map((s) => s.worker.call("gc")));
      await sleep(1000);
      const rssOnline = rssBytes(pids);
      const st0 = await pgCounters(db);
      const c0 = cpuSeconds(pids);
      const w0 = performance.now();
      await sleep(2 * STATUS_INTERVAL_MS);
      const quietS = (performance.now() - w0) / 1000;
      const cpuQuiet = cpuSeconds(pids) - c0;
      const st1 = await pgCounters(db);
      const statuses = (n * quietS * 1000) / STATUS_INTERVAL_MS;
      const perDevice = {
        rssPerDeviceBytes: (rssOnline - rssIdle) / n,
        cpuMsPerStatus: (cpuQuiet * 1000) / statuses,
        transactionsPerStatus: (st1.xact - st0.xact) / statuses,
        rowsInsertedPerStatus: (st1.ins - st0.ins) / statuses,
        rowsUpdatedPerStatus: (st1.upd - st0.upd) / statuses,
        // Rows inserted or updated per status, by table (n_tup_ins + n_tup_upd).
        insertsByTable: diffTables(st0.tables, st1.tables, statuses),
        tableBytes: await tableBytes(db),
        statusesInWindow: statuses,
        windowSeconds: quietS,
      };
      details.perDevice = perDevice;
      ctx.log(
        `  quiet window: RSS/device ${(perDevice.rssPerDeviceBytes / 1024).toFixed(1)} KiB, CPU/status ${perDevice.cpuMsPerStatus.toFixed(3)} ms, ` +
          `transactions/status ${perDevice.transactionsPerStatus.toFixed(3)}, rows inserted/status ${perDevice.rowsInsertedPerStatus.toFixed(2)}`,
      );

      load = spawnWorker(workerPath("http-load"));
      await load.ready;
      const token = await login(proxy.url);
      const api = await apiPhase(load, proxy.url, token, pids, params.windowMs, ctx, "API");
      details.api = api;

      const label = await call<{ id: string }>(proxy.url, token, "POST", "/pathlabels", { name: "bench-internet", type: "DIA" });
      const fanout = async (
        name: string,
        port: number,
        afterAnswer?: (jobIds: string[]) => Promise<void>,
      ): Promise<FanoutResult> => {
        const policy = await call<{ id: string }>(proxy.url, token, "POST", "/mlpolicies", {
          name,
          rules: [
            {
              name: "voice",
              priority: 1,
              // A rule of its own per fan-out, so every device's compiled config changes and gets a job.
              match: { protocol: "udp", ports: `${port}-${port + 1}` },
              action: { order: "link-quality", pathlabels: [label.body.id] },
            },
          ],
        });
        // Which instance holds each device's link just before the request.
        const holders = await db.query<{ device_id: string; pid: number }>(
          "select s.device_id, i.pid from device_sessions s join gateway_instances i on i.id = s.instance_id",
        );
        const holderOf = new Map(holders.rows.map((r) => [r.device_id, Number(r.pid)]));
        await allSims("mark");
        const sentAt = Date.now();
        const t0 = performance.now();
        const res = await call<{ jobIds: string[] }>(proxy.url, token, "POST", `/mlpolicies/${policy.body.id}/install`, {
          filter: [],
        });
        const requestMs = performance.now() - t0;
        const ids = res.body.jobIds;
        await afterAnswer?.(ids);
        const servedBy = servers.findIndex((_, i) => serverName(i) === res.servedBy);
        if (servedBy < 0) throw new Error(`install answered without X-Tern-Served-By (${res.servedBy})`);
        await waitFor(
          `every job of ${name} complete`,
          async () => ((await jobStates(db, ids)).complete ?? 0) >= ids.length,
          300_000,
          50,
        ).catch(async (err) => {
          throw new Error(`${(err as Error).message}: ${JSON.stringify(await jobStates(db, ids))}`);
        });
        const completeMs = performance.now() - t0;
        const rows = await db.query<{ device_id: string; state: string; finished_at: Date | null }>(
          "select device_id, state, finished_at from jobs where id = any($1::uuid[])",
          [ids],
        );
        const servedPid = servers[servedBy]!.pid;
        let cross = 0;
        let crossComplete = 0;
        for (const r of rows.rows) {
          const holder = holderOf.get(r.device_id);
          if (holder !== undefined && holder !== servedPid) {
            cross++;
            if (r.state === "complete") crossComplete++;
          }
        }
        return {
          ids,
          jobs: ids.length,
          servedBy,
          requestMs,
          completeMs,
          perJob: summarize(rows.rows.map((r) => (r.finished_at?.getTime() ?? Number.NaN) - sentAt)),
          crossInstance: cross,
          crossInstanceComplete: crossComplete,
          states: await jobStates(db, ids),
        };
      };

      await sleep(1000);
      const f1 = await fanout("bench-policy-1", 5060);
      details.fanout = { ...f1, ids: undefined };
      ctx.log(
        `  fan-out served by ${serverName(f1.servedBy)}: ${f1.jobs} jobs, answered in ${f1.requestMs.toFixed(0)} ms, all complete after ` +
          `${f1.completeMs.toFixed(0)} ms; ${f1.crossInstance} for devices on another instance, ${f1.crossInstanceComplete} of them complete`,
      );
      if (f1.jobs !== n) notes.push(`fan-out: ${f1.jobs} jobs for ${n} devices`);

      const figures: Figure[] = [];
      const base = (key: string) =>
        params.instances === 1 ? undefined : { case: "server-scale-out", params: { ...params, instances: 1 }, key };
      const apiFigures = (phase: ApiPhase, prefix: string, what: string) => {
        for (const e of API_ENDPOINTS) {
          const r = phase.byEndpoint[e.key]!;
          figures.push(
            {
              key: `${prefix}${e.key}-p50`,
              label: `${what}${e.label} p50`,
              value: r.p50 ?? Number.NaN,
              unit: "ms",
              better: "lower",
              baseline: base(`api-${e.key}-p50`),
            },
            {
              key: `${prefix}${e.key}-p99`,
              label: `${what}${e.label} p99`,
              value: r.p99 ?? Number.NaN,
              unit: "ms",
              better: "lower",
              baseline: base(`api-${e.key}-p99`),
            },
            {
              key: `${prefix}${e.key}-rps`,
              label: `${what}${e.label} requests/s`,
              value: r.perSec,
              unit: "req/s",
              better: "higher",
              baseline: base(`api-${e.key}-rps`),
            },
          );
          const bad = Object.entries(r.statuses).filter(([s]) => s !== "200");
          if (r.errors > 0 || bad.length > 0)
            notes.push(`${what}${e.label}: ${r.errors} failed requests, statuses ${JSON.stringify(r.statuses)}`);
        }
        figures.push({
          key: `${prefix}cpu-ms-per-request`,
          label: `${what}server CPU per API request (all instances)`,
          value: phase.cpuMsPerRequest,
          unit: "ms",
          better: "lower",
          baseline: base("api-cpu-ms-per-request"),
        });
      };
      figures.push(
        {
          key: "online-ms",
          label: "every device online through the proxy (connect + first job)",
          value: ramp.onlineMs,
          unit: "ms",
          better: "lower",
          baseline: base("online-ms"),
        },
        {
          key: "rss-per-device",
          label: "server RSS per device (all instances, after GC)",
          value: perDevice.rssPerDeviceBytes,
          unit: "B",
          better: "lower",
          baseline: base("rss-per-device"),
        },
        {
          key: "rss-total",
          label: "server RSS with N devices (all instances)",
          value: rssOnline,
          unit: "B",
          better: "lower",
          baseline: base("rss-total"),
        },
        {
          key: "cpu-ms-per-status",
          label: "server CPU per status, quiet window (all instances)",
          value: perDevice.cpuMsPerStatus,
          unit: "ms",
          better: "lower",
          baseline: base("cpu-ms-per-status"),
        },
      );
      apiFigures(api, "api-", "");
      figures.push(
        {
          key: "fanout-request-ms",
          label: "fan-out: install request answered",
          value: f1.requestMs,
          unit: "ms",
          better: "lower",
          baseline: base("fanout-request-ms"),
        },
        {
          key: "fanout-complete-ms",
          label: "fan-out: every job complete",
          value: f1.completeMs,
          unit: "ms",
          better: "lower",
          baseline: base("fanout-complete-ms"),
        },
        {
          key: "fanout-jobs-per-sec",
          label: "fan-out: jobs completed per second",
          value: f1.jobs / (f1.completeMs / 1000),
          unit: "jobs/s",
          better: "higher",
          baseline: base("fanout-jobs-per-sec"),
        },
        {
          key: "fanout-job-p50",
          label: "fan-out: per job request → complete p50",
          value: f1.perJob.p50,
          unit: "ms",
          better: "lower",
          baseline: base("fanout-job-p50"),
        },
        {
          key: "fanout-job-p99",
          label: "fan-out: per job request → complete p99",
          value: f1.perJob.p99,
          unit: "ms",
          better: "lower",
          baseline: base("fanout-job-p99"),
        },
      );
      if (params.instances > 1) {
        figures.push(
          {
            key: "cross-instance-jobs",
            label: "fan-out: jobs for devices on another instance than the request's",
            value: f1.crossInstance,
            unit: "count",
            better: "higher",
          },
          {
            key: "cross-instance-complete",
            label: "… of them complete",
            value: f1.crossInstanceComplete,
            unit: "count",
            better: "higher",
          },
        );
        if (f1.crossInstance === 0) notes.push("no job crossed instances: the cross-instance path was not exercised");
        if (f1.crossInstanceComplete !== f1.crossInstance)
          notes.push(`${f1.crossInstance - f1.crossInstanceComplete} cross-instance jobs not complete`);
        figures.push(...(await killPhase()));
      }
      return { figures, notes, details };

      /** Second fan-out, kill -9 of the last instance right after its answer, recovery. */
      async function killPhase(): Promise<Figure[]> {
        const victim = servers.length - 1;
        const victimPid = servers[victim]!.pid;
        const victimId = (await instanceIdsByPid(db)).get(victimPid);
        const survivors = pids.filter((p) => p !== victimPid);
        let killedAt = 0;
        let atKill: Record<string, number> = {};
        let victimDevices = 0;
        const f2 = await fanout("bench-policy-2", 5070, async (ids) => {
          // Jobs of the victim's devices as they stand at the kill (queued, running, complete).
          const r = await db.query<{ state: string; n: number }>(
            `select j.state, count(*)::int as n from jobs j join device_sessions s on s.device_id = j.device_id
              where j.id = any($1::uuid[]) and s.instance_id = $2 group by j.state`,
            [ids, victimId],
          );
          process.kill(victimPid, "SIGKILL");
          killedAt = performance.now();
          atKill = Object.fromEntries(r.rows.map((x) => [x.state, x.n]));
          victimDevices = Object.values(atKill).reduce((a, b) => a + b, 0);
          ctx.log(
            `  kill -9 ${serverName(victim)} (pid ${victimPid}) holding ${victimDevices} devices; their jobs at the kill ${JSON.stringify(atKill)}`,
          );
          // Time until every device is welcomed again (device side) and has a session on a live instance (database).
          const simReady = async () => (await allSims<{ ready: number }>("ready")).reduce((a, r) => a + r.ready, 0);
          const deviceSide = waitFor("the killed instance's links to drop", async () => (await simReady()) < n, 10_000, 20)
            .then(() => waitFor("every device online again (simulator)", async () => (await simReady()) >= n, 120_000, 50))
            .then(() => performance.now() - killedAt);
          const dbSide = waitFor(
            "every device's session on a surviving instance",
            async () =>
              (
                await db.query<{ n: number }>("select count(*)::int as n from device_sessions where instance_id <> $1", [
                  victimId,
                ])
              ).rows[0]!.n >= n,
            120_000,
            50,
          );
          const [simMs, dbMs] = await Promise.all([deviceSide, dbSide.then(() => performance.now() - killedAt)]);
          details.reconnect = { simMs, dbMs, sinceKillMs: performance.now() - killedAt };
          ctx.log(`  every device online on the survivors ${(Math.max(simMs, dbMs) / 1000).toFixed(2)} s after the kill`);
        });
        const onlineAfterKillMs = (details.reconnect as { simMs: number; dbMs: number }).simMs;
        const onlineDbMs = (details.reconnect as { simMs: number; dbMs: number }).dbMs;
        // Lost or doubled: every job of the fan-out complete, exactly one per device, and no device received the same config twice.
        const perDevice = await db.query<{
          devices: number;
          jobs: number;
          complete: number;
          resent: number;
          maxattempts: number;
        }>(
          `select count(distinct device_id)::int as devices, count(*)::int as jobs,
                  count(*) filter (where state = 'complete')::int as complete,
                  count(*) filter (where attempts > 1)::int as resent, coalesce(max(attempts), 0)::int as maxattempts
             from jobs where id = any($1::uuid[])`,
          [f2.ids],
        );
        const jobsNow = await db.query<{ n: number }>("select count(*)::int as n from jobs where state in ('queued', 'running')");
        const counts = await allSims<{ devices: number; doubled: number; examples: unknown[] }>("applyCounts");
        const applies = {
          devices: counts.reduce((a, c) => a + c.devices, 0),
          doubled: counts.reduce((a, c) => a + c.doubled, 0),
          examples: counts.flatMap((c) => c.examples),
        };
        details.kill = {
          victim,
          victimDevices,
          atKill,
          fanout: { ...f2, ids: undefined },
          jobs: perDevice.rows[0],
          applies,
          activeAfter: jobsNow.rows[0]!.n,
        };
        const lost = f2.jobs - (f2.states.complete ?? 0);
        ctx.log(
          `  after the kill: ${f2.states.complete ?? 0}/${f2.jobs} jobs complete in ${f2.completeMs.toFixed(0)} ms, ` +
            `${applies.doubled} configs received twice, ${perDevice.rows[0]!.resent} jobs sent more than once`,
        );
        if (lost > 0) notes.push(`${lost} jobs of the fan-out during the kill not complete`);
        if (applies.doubled > 0)
          notes.push(`${applies.doubled} devices received the same config twice: ${JSON.stringify(applies.examples)}`);
        // The dead instance's row is reaped after three heartbeats; the API is measured again meanwhile.
        const reaped = waitFor(
          "the dead instance reaped",
          async () => (await db.query("select 1 from gateway_instances where id = $1", [victimId])).rowCount === 0,
          120_000,
          200,
        ).then(() => performance.now() - killedAt);
        const after = await apiPhase(load!, proxy.url, token, survivors, params.windowMs, ctx, "API after the kill");
        details.apiAfterKill = after;
        const reapedMs = await reaped.catch(() => Number.NaN);
        const spreadAfter = await sessionsByPid(db);
        details.devicesPerInstanceAfterKill = survivors.map((p) => spreadAfter.get(p) ?? 0);
        const out: Figure[] = [
          {
            key: "kill-victim-devices",
            label: "kill -9: devices on the killed instance",
            value: victimDevices,
            unit: "count",
            better: "higher",
          },
          {
            key: "kill-jobs-in-flight",
            label: "kill -9: their fan-out jobs queued or running at the kill",
            value: (atKill.queued ?? 0) + (atKill.running ?? 0),
            unit: "count",
            better: "higher",
          },
          {
            key: "kill-online-ms",
            label: "kill -9: every device online again on the others (device side)",
            value: onlineAfterKillMs,
            unit: "ms",
            better: "lower",
          },
          {
            key: "kill-online-db-ms",
            label: "kill -9: every device's session on a surviving instance (database)",
            value: onlineDbMs,
            unit: "ms",
            better: "lower",
          },
          {
            key: "kill-fanout-complete-ms",
            label: "kill -9: every job of the fan-out complete",
            value: f2.completeMs,
            unit: "ms",
            better: "lower",
            baseline: base("fanout-complete-ms"),
          },
          {
            key: "kill-jobs-lost",
            label: "kill -9: jobs of the fan-out not complete",
            value: lost,
            unit: "count",
            better: "lower",
          },
          {
            key: "kill-configs-doubled",
            label: "kill -9: devices that received the same config twice",
            value: applies.doubled,
            unit: "count",
            better: "lower",
          },
          {
            key: "kill-jobs-resent",
            label: "kill -9: jobs sent more than once (device had not answered)",
            value: perDevice.rows[0]!.resent,
            unit: "count",
            better: "lower",
          },
          {
            key: "kill-reaped-ms",
            label: "kill -9: dead instance reaped (row and sessions gone)",
            value: reapedMs,
            unit: "ms",
            better: "lower",
          },
        ];
        apiFigures(after, "after-kill-", "after the kill: ");
        return out;
      }
    } finally {
      await Promise.all(sims.map((w) => w.call("stop", {}, 60_000).catch(() => undefined)));
      await stopAll(...sims, load);
      for (const p of proxies) await p.stop();
      for (const s of servers) await s.stop().catch(() => undefined);
      await db.end();
      await scratch.drop();
    }
  },
};

interface PgCounters {
  xact: number;
  ins: number;
  upd: number;
  tables: Record<string, number>;
}

async function pgCounters(db: pg.Pool): Promise<PgCounters> {
  // pg_stat counters are read in snapshots per transaction: a fresh one for each reading.
  await db.query("select pg_stat_clear_snapshot()");
  const d = await db.query<{ xact: string; ins: string; upd: string }>(
    "select xact_commit + xact_rollback as xact, tup_inserted as ins, tup_updated as upd from pg_stat_database where datname = current_database()",
  );
  const t = await db.query<{ relname: string; n: string }>("select relname, n_tup_ins + n_tup_upd as n from pg_stat_user_tables");
  return {
    xact: Number(d.rows[0]!.xact),
    ins: Number(d.rows[0]!.ins),
    upd: Number(d.rows[0]!.upd),
    tables: Object.fromEntries(t.rows.map((r) => [r.relname, Number(r.n)])),
  };
}

function diffTables(a: Record<string, number>, b: Record<string, number>, statuses: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b)) {
    const d = v - (a[k] ?? 0);
    if (d > 0) out[k] = d / statuses;
  }
  return out;
}

async function tableBytes(db: pg.Pool): Promise<Record<string, { rows: number; bytes: number }>> {
  const r = await db.query<{ relname: string; rows: string; bytes: string }>(
    `select c.relname, s.n_live_tup as rows, pg_total_relation_size(c.oid) as bytes
       from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      order by pg_total_relation_size(c.oid) desc limit 12`,
  );
  return Object.fromEntries(r.rows.map((x) => [x.relname, { rows: Number(x.rows), bytes: Number(x.bytes) }]));
}

/**
 * Simulated devices in one simulator process per proxy (the devices of proxy k
 * connect through it), then every device's first job complete.
 */
async function rampThroughProxies(
  fleet: Fleet,
  proxies: RunningHaproxy[],
  sims: Worker[],
  anyServer: TernServer,
  ctx: BenchContext,
): Promise<{ connectMs: number; onlineMs: number; failed: number }> {
  const n = fleet.seed.devices;
  const share = Math.ceil(n / proxies.length);
  for (const _ of proxies) sims.push(spawnWorker(workerPath("simulator"), { nodeFlags: ["--expose-gc"] }));
  await Promise.all(sims.map((w) => w.ready));
  const t0 = performance.now();
  const results = await Promise.all(
    proxies.map(async (p, k) => {
      const sim = sims[k]!;
      const startIndex = k * share;
      await sim.call("create", {
        options: {
          server: p.url,
          token: "unused: the fleet is seeded",
          count: Math.min(share, n - startIndex),
          startIndex,
          machinePrefix: FLEET_PREFIX,
          identitySeed: benchIdentitySeed(fleet.tokenSecret),
          statusIntervalMs: STATUS_INTERVAL_MS,
          concurrency: Math.max(20, Math.round(200 / proxies.length)),
        },
      });
      await sim.call("useFleetCredentials", { secret: fleet.tokenSecret });
      return sim.call<{ ready: number; failures: number }>("connect", {}, 1_800_000);
    }),
  );
  const connectMs = performance.now() - t0;
  ctx.log(
    `  ${results.reduce((a, r) => a + r.ready, 0)} devices connected in ${(connectMs / 1000).toFixed(1)} s; waiting for their first jobs`,
  );
  await waitFor(
    "every first job to complete",
    async () => (await anyServer.worker.call<Record<string, number>>("jobCounts", { type: "modify" })).complete === n,
    1_800_000,
    500,
  );
  return { connectMs, onlineMs: performance.now() - t0, failed: results.reduce((a, r) => a + r.failures, 0) };
}
