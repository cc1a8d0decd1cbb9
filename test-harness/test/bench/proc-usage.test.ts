import { describe, expect, it } from "vitest";
import { cpuPercent, readProcUsage } from "../../src/bench/proc-usage.ts";

describe.runIf(process.platform === "linux")("/proc usage", () => {
  it("reads RSS, peak RSS and CPU time of a process, and CPU time grows while it works", () => {
    const a = readProcUsage(process.pid);
    expect(a.rssBytes).toBeGreaterThan(1024 * 1024);
    expect(a.peakRssBytes).toBeGreaterThanOrEqual(a.rssBytes);
    const until = Date.now() + 300;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    const b = readProcUsage(process.pid);
    expect(x).toBeGreaterThan(0);
    expect(b.cpuSeconds).toBeGreaterThan(a.cpuSeconds);
    expect(cpuPercent(a, b)).toBeGreaterThan(0);
  });

  it("throws for a process that does not exist", () => {
    expect(() => readProcUsage(2 ** 22 + 1)).toThrow(/ENOENT/);
  });
});
