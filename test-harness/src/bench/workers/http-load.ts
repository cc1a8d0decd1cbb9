/**
 * HTTP load generator in its own process: `concurrency` clients on keep-alive
 * connections, each sending its next request as soon as the previous answer
 * has been read in full, for a duration after a warm-up. Every request's time
 * (send → last byte of the body) is a sample; percentiles are exact.
 */
import http from "node:http";
import { Samples } from "../stats.ts";
import { serve } from "./ipc.ts";

interface Answer {
  status: number;
  bytes: number;
  total: string | null;
}

function request(agent: http.Agent, url: URL, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { agent, headers, method: "GET" }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on("end", () => {
        const total = res.headers["records-total"];
        resolve({ status: res.statusCode ?? 0, bytes, total: typeof total === "string" ? total : null });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

async function run(args: Record<string, unknown>) {
  const url = new URL(String(args.url));
  const headers = (args.headers ?? {}) as Record<string, string>;
  const concurrency = Number(args.concurrency);
  const durationMs = Number(args.durationMs);
  const warmupMs = Number(args.warmupMs ?? 500);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const samples = new Samples();
  const statuses: Record<string, number> = {};
  let errors = 0;
  let firstError: string | null = null;
  let last: Answer | null = null;
  let counting = false;
  let running = true;
  const client = async () => {
    while (running) {
      const t0 = process.hrtime.bigint();
      // Only requests sent inside the window count: one sent during the warm-up waited behind the first
      // connections and the cold caches, which is what the warm-up is there to leave out.
      const inWindow = counting;
      try {
        const a = await request(agent, url, headers);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (inWindow && counting) {
          samples.add(ms);
          statuses[a.status] = (statuses[a.status] ?? 0) + 1;
        }
        last = a;
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  const clients = Array.from({ length: concurrency }, client);
  await new Promise((r) => setTimeout(r, warmupMs));
  counting = true;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, durationMs));
  counting = false;
  const elapsed = performance.now() - t0;
  running = false;
  await Promise.all(clients);
  agent.destroy();
  const answer = last as Answer | null;
  return {
    requests: samples.count,
    perSec: samples.count / (elapsed / 1000),
    errors,
    firstError,
    statuses,
    bodyBytes: answer?.bytes ?? 0,
    recordsTotal: answer?.total ?? null,
    ...samples.summary(),
  };
}

/** One request, to learn the body size and check the answer before the timed run. */
async function probe(args: Record<string, unknown>) {
  const agent = new http.Agent({ keepAlive: false });
  try {
    return await request(agent, new URL(String(args.url)), (args.headers ?? {}) as Record<string, string>);
  } finally {
    agent.destroy();
  }
}

serve({ run, probe }, { pid: process.pid });
