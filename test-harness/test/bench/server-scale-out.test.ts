/**
 * A tiny run of the scale-out case: two Tern instances behind Debian's
 * HAProxy on a scratch PostgreSQL database, real simulated devices. Checks
 * what the case claims to check (jobs crossing instances complete, every
 * device back on the survivor after kill -9, no job lost, no config received
 * twice) and that the proxy configuration is valid, never how fast.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { REQUIRE_VAR } from "@tern/netlab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverScaleOut } from "../../src/bench/cases/server-scale-out.ts";
import { haproxyBinary, haproxyConfig } from "../../src/bench/server/haproxy.ts";
import type { BenchContext, Measurement } from "../../src/bench/types.ts";
import { benchDatabaseBlocker, benchDatabaseUrl } from "./support/database.ts";

const databaseUrl = benchDatabaseUrl;
const pgBlocker = await benchDatabaseBlocker("bench scale-out smoke");
const haproxy = haproxyBinary();
if (haproxy === null) {
  // .ci/run installs haproxy: there a missing one is an error, not a skip.
  if (process.env[REQUIRE_VAR] === "1") throw new Error("bench scale-out smoke: haproxy is not installed");
  console.warn("bench scale-out smoke: skipped, haproxy is not installed (apt-get install haproxy)");
}

let tmpDir: string;
beforeAll(async () => {
  tmpDir = await mkdtemp(join(os.tmpdir(), "tern-bench-scale-out-"));
});
afterAll(async () => {
  await rm(tmpDir, { recursive: true, force: true });
});

function value(m: Measurement, key: string): number {
  const f = m.figures.find((x) => x.key === key);
  if (!f) throw new Error(`no figure ${key}; figures: ${m.figures.map((x) => x.key).join(", ")}`);
  expect(f.value, key).not.toBeNull();
  return f.value!;
}

describe.runIf(haproxy !== null)("the HAProxy configuration of docs/scale.md", () => {
  it("is accepted by haproxy -c", async () => {
    const file = join(tmpDir, "check.cfg");
    await writeFile(
      file,
      haproxyConfig({
        bindHost: "127.0.0.1",
        bindPort: 18443,
        maxconn: 1000,
        servers: [
          { name: "tern0", host: "127.0.0.1", port: 18001 },
          { name: "tern1", host: "127.0.0.1", port: 18002 },
        ],
      }),
    );
    const r = spawnSync(haproxy!, ["-c", "-f", file], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
  });
});

describe.runIf(pgBlocker === null && haproxy !== null)("server-scale-out smoke run", () => {
  it("spreads the fleet, crosses instances, and survives kill -9 of one instance", async () => {
    const ctx: BenchContext = {
      mode: "quick",
      env: { databaseUrl, tmpDir },
      log: () => {},
      measure: async () => ({ figures: [] }),
    };
    const m = await serverScaleOut.run({ devices: 12, instances: 2, windowMs: 300 }, ctx);
    const perInstance = (m.details?.devicesPerInstance ?? []) as number[];
    expect(perInstance.reduce((a, b) => a + b, 0)).toBe(12);
    expect(Math.min(...perInstance)).toBeGreaterThan(0);
    // Jobs for devices on the other instance than the one that served the request, all complete.
    expect(value(m, "cross-instance-jobs")).toBeGreaterThan(0);
    expect(value(m, "cross-instance-complete")).toBe(value(m, "cross-instance-jobs"));
    expect(value(m, "kill-victim-devices")).toBeGreaterThan(0);
    expect(value(m, "kill-online-ms")).toBeGreaterThan(0);
    expect(value(m, "kill-jobs-lost")).toBe(0);
    expect(value(m, "kill-configs-doubled")).toBe(0);
    expect(m.details?.devicesPerInstanceAfterKill).toEqual([12]);
    // The API answered through the proxy after the kill too.
    expect(value(m, "after-kill-jobs-rps")).toBeGreaterThan(0);
    expect(m.notes?.filter((n) => /not complete|twice|failed requests/.test(n))).toEqual([]);
  }, 300_000);
});
