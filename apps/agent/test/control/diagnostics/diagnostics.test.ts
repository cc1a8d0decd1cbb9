/**
 * Diagnostics with the real tools against loopback (iputils ping, traceroute,
 * the system resolver), through the RequestHandler as the server's requests
 * reach them: lines as they come, the final result, cancel and time limit.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REQUESTS } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runLines } from "../../../src/control/diagnostics/run-lines.ts";
import { RequestHandler } from "../../../src/control/requests.ts";
import { pidAlive } from "../../../src/process.ts";

let dir: string;
let logFile: string;
const handler = () =>
  new RequestHandler({
    drivers: [],
    context: {} as never,
    current: () => null,
    tunnels: { report: () => [] } as never,
    logFile,
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tern-diag-"));
  logFile = join(dir, "agent.log");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function collect() {
  const lines: { at: number; line: string }[] = [];
  return { lines, onLine: (line: string) => lines.push({ at: Date.now(), line }) };
}

describe("ping", () => {
  it("streams each reply as it comes, then the statistics", async () => {
    const c = collect();
    const result = (await handler().handle("ping", { target: "127.0.0.1", count: 4, intervalMs: 200 }, { onLine: c.onLine })) as {
      transmitted: number;
      received: number;
      rttMinMs: number;
    };
    const done = Date.now();
    expect(result).toMatchObject({ transmitted: 4, received: 4, lossPercent: 0, stopped: null });
    expect(result.rttMinMs).toBeGreaterThan(0);
    const replies = c.lines.filter((l) => l.line.startsWith("64 bytes from 127.0.0.1"));
    expect(replies).toHaveLength(4);
    // Three intervals of 200 ms lie between the first reply and the last: the first was not held back.
    expect(done - replies[0]!.at).toBeGreaterThanOrEqual(500);
    expect(c.lines.at(-1)?.line).toMatch(/^rtt min\/avg\/max\/mdev/);
  });

  it("pings IPv6 loopback with -6", async () => {
    const result = await handler().handle("ping", { target: "::1", count: 1, ipVersion: 6 });
    expect(result).toMatchObject({ transmitted: 1, received: 1 });
  });

  it("cancel stops the child (SIGINT, statistics kept) and the process is gone", async () => {
    const h = handler();
    const c = collect();
    let pid = 0;
    const running = h.handle(
      "ping",
      { target: "127.0.0.1", count: 100, intervalMs: 200 },
      { id: "req-cancel", onLine: c.onLine, onStart: (p) => (pid = p) },
    );
    await expect.poll(() => c.lines.some((l) => l.line.startsWith("64 bytes")), { timeout: 5000 }).toBe(true);
    expect(pidAlive(pid)).toBe(true);
    expect(await h.handle("cancel", { id: "req-cancel" })).toEqual({ stopped: true });
    const result = (await running) as { transmitted: number; stopped: string };
    expect(result.stopped).toBe("cancelled");
    expect(result.transmitted).toBeGreaterThan(0);
    expect(result.transmitted).toBeLessThan(100);
    expect(pidAlive(pid)).toBe(false);
    expect(await h.handle("cancel", { id: "req-cancel" })).toEqual({ stopped: false });
  });

  it("refuses targets that are not addresses or host names, and options out of bounds", async () => {
    for (const params of [
      { target: "-f" },
      { target: "127.0.0.1; reboot" },
      { target: "127.0.0.1", count: 1000 },
      { target: "127.0.0.1", intervalMs: 10 },
      { target: "127.0.0.1", source: "-I" },
    ])
      await expect(handler().handle("ping", params), JSON.stringify(params)).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });

  it("an unknown host is a refusal with ping's reason, not a result", async () => {
    await expect(handler().handle("ping", { target: "no-such-host.invalid", count: 1 })).rejects.toMatchObject({
      code: "INVALID_REQUEST",
    });
  });
});

describe("the hard time limit", () => {
  it("stops a command that runs past it", async () => {
    const started = Date.now();
    const r = await runLines(["sleep", "5"], { onLine: () => {}, timeLimitMs: 200 });
    expect(r.stopped).toBe("time-limit");
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe("traceroute", () => {
  it("traces loopback: one hop, 127.0.0.1", async () => {
    const c = collect();
    const result = await handler().handle("traceroute", { target: "127.0.0.1", maxHops: 3 }, { onLine: c.onLine });
    expect(REQUESTS.traceroute.result.parse(result)).toMatchObject({ hops: [{ hop: 1, address: "127.0.0.1" }], stopped: null });
    expect(c.lines.map((l) => l.line)[0]).toMatch(/^traceroute to 127\.0\.0\.1/);
    expect(c.lines.map((l) => l.line)[1]).toMatch(/^ 1 {2}127\.0\.0\.1 {2}[\d.]+ ms/);
  });
});

describe("dns-lookup", () => {
  it("resolves localhost through the router's resolver (hosts file), one line per answer", async () => {
    const c = collect();
    const result = await handler().handle("dns-lookup", { name: "localhost" }, { onLine: c.onLine });
    expect(result).toMatchObject({ name: "localhost", type: "A", via: "system", error: null });
    expect((result as { answers: { value: string }[] }).answers.map((a) => a.value)).toContain("127.0.0.1");
    expect(c.lines.map((l) => l.line)).toContain("localhost A 127.0.0.1");
  });

  it("a name that does not exist answers an error code, not a failure", async () => {
    const result = await handler().handle("dns-lookup", { name: "no-such-host.invalid", timeoutMs: 2000 });
    expect(result).toMatchObject({ answers: [], error: expect.stringMatching(/^E[A-Z]+/) });
  });
});

describe("log-read", () => {
  const line = (level: number, msg: string) => JSON.stringify({ level, time: "2026-11-26T00:00:00.000Z", pid: 1, msg });

  it("answers the last N lines at or above the level, oldest first, from the rotated file too", async () => {
    await writeFile(`${logFile}.1`, `${line(50, "old error")}\n${line(30, "old info")}\n`);
    const lines = Array.from({ length: 3000 }, (_, i) => line(i % 3 === 0 ? 40 : 30, `m${i}`));
    await writeFile(logFile, `${lines.join("\n")}\n`);
    const last = (await handler().handle("log-read", { lines: 5 })) as { lines: string[]; truncated: boolean; file: string };
    expect(last.lines.map((l) => JSON.parse(l).msg)).toEqual(["m2995", "m2996", "m2997", "m2998", "m2999"]);
    expect(last).toMatchObject({ truncated: false, file: logFile });
    const warn = (await handler().handle("log-read", { lines: 3, level: "warn" })) as { lines: string[] };
    expect(warn.lines.map((l) => JSON.parse(l).msg)).toEqual(["m2991", "m2994", "m2997"]);
    const errors = (await handler().handle("log-read", { lines: 10, level: "error" })) as { lines: string[] };
    expect(errors.lines.map((l) => JSON.parse(l).msg)).toEqual(["old error"]);
  });

  it("caps the answer's size and says truncated, keeping the newest lines", async () => {
    const big = "x".repeat(15_000);
    await rm(`${logFile}.1`, { force: true });
    await writeFile(logFile, `${Array.from({ length: 80 }, (_, i) => line(30, `${i}:${big}`)).join("\n")}\n`);
    const r = (await handler().handle("log-read", { lines: 80 })) as { lines: string[]; truncated: boolean };
    expect(r.truncated).toBe(true);
    expect(r.lines.length).toBeGreaterThan(10);
    expect(r.lines.length).toBeLessThan(80);
    expect(JSON.parse(r.lines.at(-1)!).msg.startsWith("79:")).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThan(1024 * 1024);
  });

  it("no log file: no lines", async () => {
    const r = await new RequestHandler({
      drivers: [],
      context: {} as never,
      current: () => null,
      tunnels: { report: () => [] } as never,
      logFile: join(dir, "missing.log"),
    }).handle("log-read", {});
    expect(r).toMatchObject({ lines: [], truncated: false });
  });
});
