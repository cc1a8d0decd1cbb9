/** The UDP probe protocol over real sockets on 127.0.0.1 (no root needed). */
import { createSocket, type Socket } from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import { decodeProbe, encodeProbe, UdpEchoResponder, UdpProbeSession } from "../../src/probes/index.ts";

/**
 * A far end that answers with a chosen delay per sequence number, optionally
 * twice. It records how long it really held each request (same process, same
 * monotonic clock), so accuracy is judged against what happened, not against
 * timers that a loaded machine runs late.
 */
async function farEnd(
  delayMs: (seq: number) => number | null,
  duplicate = false,
): Promise<{ port: number; socket: Socket; held: Map<number, number> }> {
  const socket = createSocket("udp4");
  const held = new Map<number, number>();
  socket.on("message", (msg, rinfo) => {
    const receivedAt = process.hrtime.bigint();
    const p = decodeProbe(msg);
    if (!p) return;
    const d = delayMs(p.seq);
    if (d === null) return;
    const reply = encodeProbe({ ...p, type: "reply" });
    setTimeout(() => {
      held.set(p.seq, Number(process.hrtime.bigint() - receivedAt) / 1e6);
      try {
        socket.send(reply, rinfo.port, rinfo.address);
        if (duplicate) socket.send(reply, rinfo.port, rinfo.address);
      } catch {
        // closed at the end of the test
      }
    }, d);
  });
  await new Promise<void>((r) => socket.bind(0, "127.0.0.1", r));
  return { port: socket.address().port, socket, held };
}

const meanAbsDiff = (xs: number[]) => xs.slice(1).reduce((a, x, i) => a + Math.abs(x - xs[i]!), 0) / (xs.length - 1);

async function probeFor(port: number, count: number, intervalMs: number, timeoutMs: number) {
  const results: { seq: number; rttMs: number | null }[] = [];
  const s = new UdpProbeSession("127.0.0.1", "127.0.0.1", port, {
    intervalMs,
    timeoutMs,
    onResult: (_t, seq, rttMs) => results.push({ seq, rttMs }),
  });
  s.start();
  await new Promise((r) => setTimeout(r, count * intervalMs + timeoutMs + 2 * intervalMs));
  s.stop();
  return results.filter((r) => r.seq <= count).sort((a, b) => a.seq - b.seq);
}

describe("UDP probe session", () => {
  const sockets: Socket[] = [];
  afterEach(() => {
    for (const s of sockets.splice(0)) s.close();
  });

  it("measures RTT from the sender's clock and jitter from alternating delays", async () => {
    const far = await farEnd((seq) => (seq % 2 ? 20 : 30));
    sockets.push(far.socket);
    const results = await probeFor(far.port, 12, 60, 500);
    expect(results.every((r) => r.rttMs !== null)).toBe(true);
    const rtts = results.map((r) => r.rttMs as number);
    const held = results.map((r) => far.held.get(r.seq)!);
    const excess = rtts.map((r, i) => r - held[i]!);
    const mean = rtts.reduce((a, b) => a + b, 0) / rtts.length;
    console.log(
      `UDP probe on loopback: mean RTT ${mean.toFixed(2)} ms for ~25 ms held, jitter ${meanAbsDiff(rtts).toFixed(2)} ms ` +
        `(far end's real hold times give ${meanAbsDiff(held).toFixed(2)} ms), max overhead ${Math.max(...excess).toFixed(2)} ms`,
    );
    // An RTT can never be shorter than the time the far end held the probe; the overhead is loopback plus event loops.
    expect(Math.min(...excess)).toBeGreaterThanOrEqual(0);
    expect(excess.reduce((a, b) => a + b, 0) / excess.length).toBeLessThan(10);
    // Jitter follows the real variation of the path (10 ms here), not timer noise of one side.
    expect(Math.abs(meanAbsDiff(rtts) - meanAbsDiff(held))).toBeLessThan(5);
    expect(meanAbsDiff(held)).toBeGreaterThan(8);
  });

  it("counts late answers as lost and ignores duplicates", async () => {
    const far = await farEnd((seq) => (seq % 3 === 0 ? 900 : 1), true);
    sockets.push(far.socket);
    const results = await probeFor(far.port, 9, 50, 400);
    expect(results.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(results.filter((r) => r.rttMs === null).map((r) => r.seq)).toEqual([3, 6, 9]);
  });

  it("counts unanswered probes as lost", async () => {
    const far = await farEnd(() => null);
    sockets.push(far.socket);
    const results = await probeFor(far.port, 4, 50, 100);
    expect(results.length).toBe(4);
    expect(results.every((r) => r.rttMs === null)).toBe(true);
  });
});

describe("UDP echo responder", () => {
  it("answers probe requests on its addresses only, and nothing else", async () => {
    const responder = new UdpEchoResponder(47655);
    responder.setAddresses(["127.0.0.1"]);
    await new Promise((r) => setTimeout(r, 50));
    const client = createSocket("udp4");
    const got: Buffer[] = [];
    client.on("message", (m) => got.push(m));
    await new Promise<void>((r) => client.bind(0, "127.0.0.1", r));
    client.send(Buffer.from("not a probe"), 47655, "127.0.0.1");
    client.send(encodeProbe({ type: "request", session: 7, seq: 1, timestampNs: 5n }), 47655, "127.0.0.1");
    client.send(encodeProbe({ type: "reply", session: 7, seq: 2, timestampNs: 5n }), 47655, "127.0.0.1");
    await new Promise((r) => setTimeout(r, 100));
    client.close();
    responder.stop();
    expect(got.map((m) => decodeProbe(m))).toEqual([{ type: "reply", session: 7, seq: 1, timestampNs: 5n }]);
    expect(responder.answered).toBe(1);
  });
});
