/**
 * A streamed diagnostic over the control link, as the server runs it: the
 * real ping's lines arrive as `request-progress` while it runs, and the
 * server's `cancel` stops it: the ping process is gone and the answer says so.
 */
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { pidAlive } from "../../../src/process.ts";
import { type Harness, startAgent } from "../../support/agent-harness.ts";
import { FakeControlServer } from "../../support/fake-control-server.ts";

/** Pids of the pings whose command line is exactly this one. */
function pingPids(argsLine: string): number[] {
  const out = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((l) => l.trim().endsWith(argsLine))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

describe("diagnostics over the control link", () => {
  let server: FakeControlServer | null = null;
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.stop();
    await server?.stop();
  });

  it("sends ping's lines as they come, and cancel kills the ping child", async () => {
    server = await FakeControlServer.start();
    h = await startAgent(server);
    await server.waitFor("hello");
    // An interval nobody else uses, so the child is ours to find.
    server.send({
      type: "request",
      id: "long-ping",
      method: "ping",
      params: { target: "127.0.0.1", count: 100, intervalMs: 230 },
    });
    const first = await server.waitFor(
      "request-progress",
      (m) => m.id === "long-ping" && m.lines.some((l) => l.startsWith("64 bytes")),
    );
    expect(first.seq).toBeGreaterThanOrEqual(0);
    expect(server.messages("response").find((m) => m.id === "long-ping")).toBeUndefined();
    const [pid] = pingPids("ping -n -O -c 100 -i 0.23 -W 1 -- 127.0.0.1");
    expect(pid && pidAlive(pid)).toBe(true);

    expect(await server.request("cancel", { id: "long-ping" })).toMatchObject({ ok: true, result: { stopped: true } });
    const answer = await server.waitFor("response", (m) => m.id === "long-ping");
    expect(answer).toMatchObject({ ok: true, result: { stopped: "cancelled" } });
    expect((answer.result as { transmitted: number }).transmitted).toBeLessThan(100);
    expect(pidAlive(pid!)).toBe(false);
    // Every line went out before the answer, numbered in order.
    const seqs = server
      .messages("request-progress")
      .filter((m) => m.id === "long-ping")
      .map((m) => m.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(server.invalid).toEqual([]);
  });
});
