import { connect, createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { cpuPercent, listenOverflows, readMachineUsage, readProcUsage } from "../../src/bench/proc-usage.ts";

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

  it("reads the whole machine's busy CPU time, at least what this process used meanwhile", () => {
    const machine = readMachineUsage();
    const own = readProcUsage(process.pid);
    const until = Date.now() + 300;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    const machine2 = readMachineUsage();
    const own2 = readProcUsage(process.pid);
    expect(x).toBeGreaterThan(0);
    // Ticks are whole hundredths of a second on both sides: allow one tick per reading.
    expect(machine2.cpuSeconds - machine.cpuSeconds).toBeGreaterThanOrEqual(own2.cpuSeconds - own.cpuSeconds - 0.02);
    expect(cpuPercent(machine, machine2)).toBeGreaterThan(50);
  });

  it("counts connections dropped from a full accept queue (TcpExt ListenOverflows)", async () => {
    // A queue of one, and eight connections made in one turn of the loop (the kernel completes their
    // handshakes before the server accepts any): those beyond the queue overflow.
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, r));
    const before = listenOverflows();
    expect(before).not.toBeNull();
    const port = (server.address() as { port: number }).port;
    const sockets = Array.from({ length: 8 }, () => connect(port, "127.0.0.1").on("error", () => undefined));
    const until = Date.now() + 100;
    while (Date.now() < until); // the loop does not turn: nothing is accepted meanwhile
    await new Promise((r) => setTimeout(r, 200));
    expect(listenOverflows()!).toBeGreaterThan(before!);
    for (const s of sockets) s.destroy();
    server.close();
  });

  it("throws for a process that does not exist", () => {
    expect(() => readProcUsage(2 ** 22 + 1)).toThrow(/ENOENT/);
  });
});
