/** The notification work queue never drops work: a burst far past its warning level all runs, in order per key. */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { WorkQueue } from "../../src/notify/work-queue.ts";

function logger() {
  const lines: string[] = [];
  const log = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
  return { log, lines };
}

describe("notification WorkQueue", () => {
  it("runs every task of a burst 50 times its warning level, in order per key, while the 'database' is stalled", async () => {
    const { log, lines } = logger();
    const queue = new WorkQueue(log, { concurrency: 4, warnPending: 200 });
    // The database is stalled until the whole burst is queued.
    let open!: () => void;
    const stalled = new Promise<void>((resolve) => {
      open = resolve;
    });
    const seen = new Map<string, number[]>();
    const devices = 2_000;
    const perDevice = 5;
    for (let n = 0; n < perDevice; n++)
      for (let d = 0; d < devices; d++) {
        const key = `device:${d}`;
        queue.push(key, async () => {
          await stalled;
          const list = seen.get(key) ?? [];
          list.push(n);
          seen.set(key, list);
        });
      }
    expect(queue.size).toBe(devices * perDevice);
    open();
    await queue.idle();
    expect(queue.size).toBe(0);
    expect(seen.size).toBe(devices);
    for (const list of seen.values()) expect(list).toEqual([0, 1, 2, 3, 4]);
    expect(queue.highWater).toBe(devices * perDevice);
    expect(lines.join("")).toContain("nothing is dropped");
    expect(lines.join("")).not.toContain("dropped: ");
  });

  it("a tagged task replaces only a waiting tail task of the same key and tag; untagged and running ones all run", async () => {
    const { log } = logger();
    const queue = new WorkQueue(log, { concurrency: 1, warnPending: 1_000 });
    let open!: () => void;
    const stalled = new Promise<void>((resolve) => {
      open = resolve;
    });
    const ran: string[] = [];
    const task = (name: string) => async () => {
      await stalled;
      ran.push(name);
    };
    queue.push("device:a", task("running"), "resolve:x"); // starts at once: never replaced
    queue.push("device:a", task("resolve-1"), "resolve:x");
    queue.push("device:a", task("resolve-2"), "resolve:x"); // replaces resolve-1
    queue.push("device:a", task("raise"));
    queue.push("device:a", task("resolve-3"), "resolve:x"); // after a raise: kept
    queue.push("device:a", task("status-1"), "status");
    queue.push("device:a", task("status-2"), "status"); // replaces status-1
    queue.push("device:b", task("b-1"), "status");
    expect(queue.coalesced).toBe(2);
    open();
    await queue.idle();
    expect(ran.filter((r) => !r.startsWith("b"))).toEqual(["running", "resolve-2", "raise", "resolve-3", "status-2"]);
    expect(ran).toContain("b-1");
  });
});
