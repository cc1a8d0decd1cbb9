/**
 * Baseline of API latency: a bare node:http server (own process) answering
 * every request with a prebuilt JSON body of the same size as the API's
 * answer, under the same keep-alive clients from the same load generator.
 * What is left is the cost of HTTP and of moving the bytes on this machine.
 */
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import type { BenchCase, Params } from "../types.ts";
import { stopAll } from "./util.ts";

export interface HttpStaticParams extends Params {
  /** Body size, rounded by the referring case so answers of about the same size share one measurement. */
  bytes: number;
  concurrency: number;
  durationMs: number;
}

/** Rounds a body size up to the next 8 KiB, so API answers of nearly the same size share one baseline run. */
export function bodyBucket(bytes: number): number {
  return Math.max(8192, Math.ceil(bytes / 8192) * 8192);
}

export const httpStatic: BenchCase<HttpStaticParams> = {
  name: "http-static",
  kind: "baseline",
  title: "bare node:http serving a fixed JSON body",
  description:
    "A bare `node:http` server (own process) answers every GET with the same prebuilt JSON body of the given size; the HTTP load " +
    "generator of the API case (another process, keep-alive clients each sending the next request when the answer is read) " +
    "measures p50/p99 per request. Measured when an API case refers to it.",
  sizes: () => [],
  async run(params) {
    let server: Worker | undefined;
    let loader: Worker | undefined;
    try {
      server = spawnWorker(workerPath("http-static"), { args: [String(params.bytes)] });
      loader = spawnWorker(workerPath("http-load"));
      const { port } = await server.ready;
      await loader.ready;
      const r = await loader.call<{ perSec: number; p50: number; p99: number; errors: number; bodyBytes: number }>("run", {
        url: `http://127.0.0.1:${port}/`,
        concurrency: params.concurrency,
        durationMs: params.durationMs,
      });
      return {
        figures: [
          { key: "latency-p50", label: "request p50", value: r.p50, unit: "ms", better: "lower" },
          { key: "latency-p99", label: "request p99", value: r.p99, unit: "ms", better: "lower" },
          { key: "requests-per-sec", label: "requests per second", value: r.perSec, unit: "req/s", better: "higher" },
        ],
        notes: r.errors > 0 ? [`${r.errors} requests failed`] : [],
        details: { ...r },
      };
    } finally {
      await stopAll(server, loader);
    }
  },
};
