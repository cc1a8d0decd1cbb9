/**
 * Issue 14: approving devices. The LAN overlap check of a device change read
 * every device of the organization (about 850 ms per approval at 5,000
 * devices); it now asks a GiST index. With N devices seeded (4 tunnels each),
 * the first `pending` of them not approved, Tern's server in its own process:
 * one approval at a time (`PUT /api/devices/{id} {isApproved: true}`), one LAN
 * change at a time (`PUT` with a new LAN subnet: the indexed overlap query),
 * then the bulk approval of the rest (`POST /api/devices/approve` with a
 * filter). Each timed series follows WARMUP untimed requests of its kind, so
 * it times a running server, not V8 compiling the route's code on its first
 * calls (measured on PostgreSQL: the first approval after start took 50 ms,
 * the next 19 took 13-28 ms, later ones 9-12 ms). Baseline: a bare node:http round trip, one request at
 * a time.
 */

import http from "node:http";
import { fleetSizes } from "../server/connect.ts";
import { type DbTarget, login, scratchDatabase, seedScratch, startTern, type TernServer } from "../server/tern.ts";
import { summarize } from "../stats.ts";
import type { BenchCase, Params } from "../types.ts";
import type { HttpStaticParams } from "./http-static.ts";

export interface DeviceApproveParams extends Params {
  devices: number;
  db: DbTarget;
  /** Single approvals and single LAN changes timed, each. */
  singles: number;
}

const BASELINE: HttpStaticParams = { bytes: 8192, concurrency: 1, durationMs: 2000 };
/** Untimed approvals and LAN changes before each timed series. */
const WARMUP = 20;

/**
 * One request on a kept-alive connection through `node:http`, the client of the baseline (http-static's load
 * generator): global `fetch` (undici) added about 0.8 ms at p50 and up to 5 ms at p99 to a loopback round trip
 * of this size, measured alone, which the baseline did not pay.
 */
function apiClient(url: string, token: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const call = (method: string, path: string, body?: unknown) => request(agent, url, token, method, path, body);
  return { call, close: () => agent.destroy() };
}

function request(agent: http.Agent, url: string, token: string, method: string, path: string, body?: unknown) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (payload !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = String(Buffer.byteLength(payload));
  }
  return new Promise<{ status: number; ms: number; body: unknown; text: string }>((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(`${url}/api${path}`, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const ms = performance.now() - t0;
        const text = Buffer.concat(chunks).toString("utf8");
        try {
          resolve({ status: res.statusCode ?? 0, ms, body: text ? (JSON.parse(text) as unknown) : null, text });
        } catch (err) {
          reject(new Error(`${method} ${path}: HTTP ${res.statusCode}, not JSON: ${text.slice(0, 200)} (${err})`));
        }
      });
    });
    req.on("error", reject);
    req.end(payload);
  });
}

export const deviceApprove: BenchCase<DeviceApproveParams> = {
  name: "device-approve",
  kind: "server",
  title: "Approving devices: one at a time, a LAN change, and the bulk approval",
  description:
    "A scratch database (PostgreSQL, and PGlite, the embedded default) is seeded with N devices (the simulator's WAN and LAN " +
    "interfaces, 4 tunnels each), all registered but not approved; Tern's server runs in its own process, no device connected. " +
    `Timed one request at a time, each series after ${WARMUP} untimed requests of its kind: ` +
    "`singles` approvals (`PUT /api/devices/{id} {isApproved: true}`: identity, validation, LAN " +
    "overlap, compile and queue the whole config), `singles` LAN changes of approved devices (`PUT` with a new LAN subnet: the " +
    "LAN overlap query against the organization), then one `POST /api/devices/approve` with the filter isApproved == false " +
    "approving the rest (the same checks per device). Requests go through `node:http` on one kept-alive connection, as the " +
    "baseline's do. Baseline: a bare node:http server, one request at a time (http-static, concurrency 1).",
  // Both engines: the 850 ms per approval was measured on PostgreSQL; PGlite is the embedded default.
  sizes: (mode) =>
    fleetSizes(mode).flatMap((devices) =>
      (["pg", "pglite"] as const).map((db) => ({ devices, db, singles: mode === "quick" ? 10 : 50 })),
    ),
  async run(params, ctx) {
    const scratch = await scratchDatabase(params.db, ctx);
    let tern: TernServer | undefined;
    let client: ReturnType<typeof apiClient> | undefined;
    try {
      const fleet = await seedScratch(scratch, { devices: params.devices, configure: false, pending: params.devices }, ctx);
      tern = await startTern(fleet, ctx);
      client = apiClient(tern.url, await login(tern.url));
      const { call } = client;
      const ids: string[] = [];
      for (let offset = 0; offset < params.devices; offset += 1000) {
        const page = await call("GET", `/devices?response=ids&limit=1000&offset=${offset}&sort=name`);
        ids.push(...(page.body as (string | { id: string })[]).map((d) => (typeof d === "string" ? d : d.id)));
      }
      if (ids.length !== params.devices) throw new Error(`expected ${params.devices} devices, the list has ${ids.length}`);

      const warm = ids.slice(0, WARMUP);
      const timed = ids.slice(WARMUP, WARMUP + params.singles);
      const approve1 = async (id: string) => {
        const r = await call("PUT", `/devices/${id}`, { isApproved: true });
        if (r.status !== 202) throw new Error(`approval of ${id}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
        return r.ms;
      };
      for (const id of warm) await approve1(id);
      const approveMs: number[] = [];
      for (const id of timed) approveMs.push(await approve1(id));
      const approve = summarize(approveMs);
      ctx.log(`  one approval at ${params.devices} devices: p50 ${approve.p50.toFixed(1)} ms, p99 ${approve.p99.toFixed(1)} ms`);

      const changeMs: number[] = [];
      for (const [k, id] of [...warm, ...timed].entries()) {
        const device = (await call("GET", `/devices/${id}`)).body as {
          interfaces: { devId: string; name: string; type: string }[];
        };
        const lan = device.interfaces.find((i) => i.type === "LAN");
        if (!lan) throw new Error(`device ${id} has no LAN interface`);
        // 198.18.0.0/15 (benchmarking addresses): overlaps no seeded LAN.
        const body = { interfaces: [{ devId: lan.devId, name: lan.name, IPv4: `198.18.${k}.1`, IPv4Mask: 24 }] };
        const r = await call("PUT", `/devices/${id}`, body);
        if (r.status !== 202 && r.status !== 200)
          throw new Error(`LAN change of ${id}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
        if (k >= warm.length) changeMs.push(r.ms);
      }
      const change = summarize(changeMs);
      ctx.log(`  one LAN change at ${params.devices} devices: p50 ${change.p50.toFixed(1)} ms, p99 ${change.p99.toFixed(1)} ms`);

      const notes: string[] = [];
      const rest = params.devices - warm.length - timed.length;
      const bulk = await call("POST", "/devices/approve", {
        filter: [{ key: "isApproved", op: "==", val: false }],
      });
      let bulkMs: number | null = null;
      let approvedInBulk = 0;
      if (bulk.status === 404 || bulk.status === 405)
        notes.push("no bulk approval endpoint in this build (POST /api/devices/approve)");
      else if (bulk.status !== 202) throw new Error(`bulk approval: HTTP ${bulk.status} ${bulk.text.slice(0, 300)}`);
      else {
        bulkMs = bulk.ms;
        approvedInBulk = (bulk.body as { approved: number }).approved;
        if (approvedInBulk !== rest) notes.push(`bulk approval approved ${approvedInBulk} of ${rest} devices`);
        ctx.log(`  bulk approval of ${approvedInBulk} devices: ${(bulkMs / 1000).toFixed(2)} s`);
      }
      const ref = (key: string) => ({ case: "http-static", params: BASELINE, key });
      return {
        figures: [
          {
            key: "approve-p50",
            label: "one approval (PUT isApproved) p50",
            value: approve.p50,
            unit: "ms",
            better: "lower",
            baseline: ref("latency-p50"),
          },
          {
            key: "approve-p99",
            label: "one approval (PUT isApproved) p99",
            value: approve.p99,
            unit: "ms",
            better: "lower",
            baseline: ref("latency-p99"),
          },
          {
            key: "lan-change-p50",
            label: "one LAN change (PUT interfaces) p50",
            value: change.p50,
            unit: "ms",
            better: "lower",
            baseline: ref("latency-p50"),
          },
          {
            key: "lan-change-p99",
            label: "one LAN change (PUT interfaces) p99",
            value: change.p99,
            unit: "ms",
            better: "lower",
            baseline: ref("latency-p99"),
          },
          {
            key: "bulk-ms",
            label: `bulk approval of the other ${rest} devices`,
            value: bulkMs,
            unit: "ms",
            better: "lower",
            baseline: ref("latency-p50"),
          },
          {
            key: "bulk-per-sec",
            label: "devices approved per second in bulk",
            value: bulkMs === null ? null : approvedInBulk / (bulkMs / 1000),
            unit: "dev/s",
            better: "higher",
            baseline: ref("requests-per-sec"),
          },
        ],
        notes,
        details: { warmup: warm.length, approveMs, changeMs, seed: fleet.seed },
      };
    } finally {
      client?.close();
      await tern?.stop();
      await scratch.drop();
    }
  },
};
