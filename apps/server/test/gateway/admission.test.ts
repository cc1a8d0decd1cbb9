/**
 * A fleet connecting at once: the listening socket's accept queue holds LISTEN_BACKLOG connections, and
 * beyond TERN_WS_ADMISSION_MAX links being admitted an upgrade is refused with 503 and a Retry-After that
 * is the link's turn, at the rate links have been leaving admission.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AdmissionPacer, INITIAL_ADMISSIONS_PER_S, MAX_RETRY_AFTER_S } from "../../src/gateway/admission.ts";
import { LISTEN_BACKLOG } from "../../src/server.ts";
import { useGatewayServer } from "../support/gateway.ts";
import { helloFor, openRawLink, type UpgradeRefusal } from "../support/raw-link.ts";

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("admission pacer", () => {
  it("hands out turns spaced by the assumed rate: successive refusals wait longer, at least 1 s", () => {
    const c = clock();
    const pacer = new AdmissionPacer(c.now);
    const waits = Array.from({ length: INITIAL_ADMISSIONS_PER_S * 10 }, () => pacer.retryAfterS());
    expect(waits[0]).toBe(1);
    for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1]!);
    // 2,000 refusals at 200 a second: the last comes back 10 s later, each second takes about 200.
    expect(waits.at(-1)).toBe(10);
    expect(waits.filter((w) => w === 5)).toHaveLength(INITIAL_ADMISSIONS_PER_S);
  });

  it("learns the rate from the links that left admission while it was full", () => {
    const c = clock();
    const pacer = new AdmissionPacer(c.now);
    for (let s = 0; s < 8; s++) {
      pacer.retryAfterS();
      for (let i = 0; i < 1000; i++) pacer.released();
      c.advance(1000);
    }
    pacer.retryAfterS();
    expect(pacer.rate).toBeGreaterThan(990);
    expect(pacer.rate).toBeLessThanOrEqual(1000);
    // A stalled server: the rate falls, not below 50 a second.
    for (let s = 0; s < 20; s++) {
      pacer.retryAfterS();
      c.advance(1000);
    }
    pacer.retryAfterS();
    expect(pacer.rate).toBe(50);
  });

  it("ignores what passed while nothing was refused, and never hands out more than the cap", () => {
    const c = clock();
    const pacer = new AdmissionPacer(c.now);
    c.advance(60_000); // a quiet minute, two releases: no measure of the rate
    pacer.released();
    pacer.released();
    expect(pacer.retryAfterS()).toBe(1);
    expect(pacer.rate).toBe(INITIAL_ADMISSIONS_PER_S);
    let last = 0;
    for (let i = 0; i < INITIAL_ADMISSIONS_PER_S * 100; i++) last = pacer.retryAfterS();
    expect(last).toBe(MAX_RETRY_AFTER_S);
    // Turns already handed out pass with time: a minute later the next refusal's turn is near again.
    c.advance(100_000);
    expect(pacer.retryAfterS()).toBeLessThanOrEqual(2);
  });
});

describe("admission", () => {
  const g = useGatewayServer({ TERN_WS_ADMISSION_MAX: "1" });

  it("refuses upgrades beyond the admission limit with 503 and a Retry-After, and admits again once room is made", async () => {
    const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
    const [first, second, third] = devices as [(typeof devices)[0], (typeof devices)[0], (typeof devices)[0]];
    // The first link is being admitted until its hello is recorded.
    const held = await openRawLink(g.server.url, first.token, first);
    const refusals: UpgradeRefusal[] = [];
    for (const d of [second, third]) {
      const refused = await openRawLink(g.server.url, d.token, d).then(
        () => {
          throw new Error("admitted beyond TERN_WS_ADMISSION_MAX");
        },
        (e: UpgradeRefusal) => e,
      );
      refusals.push(refused);
    }
    for (const r of refusals) {
      expect(r.status).toBe(503);
      expect(r.body.code).toBe("INTERNAL");
      expect(r.body.error).toMatch(/busy admitting/);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(r.retryAfter)).toBeLessThanOrEqual(MAX_RETRY_AFTER_S);
    }
    held.send(helloFor(first.machineId));
    await held.next("welcome");
    const admitted = await openRawLink(g.server.url, second.token, second);
    admitted.send(helloFor(second.machineId));
    expect((await admitted.next("welcome")).type).toBe("welcome");
    held.ws.close();
    admitted.ws.close();
  });

  it("listens with an accept queue of LISTEN_BACKLOG connections (the kernel caps it at net.core.somaxconn)", (ctx) => {
    let listening: string;
    try {
      listening = execFileSync("ss", ["-Hltn", `sport = :${new URL(g.server.url).port}`], { encoding: "utf8" });
    } catch {
      ctx.skip(true, "ss (iproute2) is not installed: the accept queue's size cannot be read");
      return;
    }
    const cap = Number(readFileSync("/proc/sys/net/core/somaxconn", "utf8"));
    // LISTEN  Recv-Q  Send-Q  Local  Peer: a listening socket's Send-Q is its backlog.
    const backlog = Number(listening.trim().split(/\s+/)[2]);
    expect(backlog).toBe(Math.min(LISTEN_BACKLOG, cap));
  });
});
