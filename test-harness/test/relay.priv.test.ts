/**
 * The control-link seam: a server on the root namespace's loopback is not
 * reachable from a lab namespace, ns-relay makes it reachable (HTTP through
 * it), and stopping the relay cuts the connections through it (how the lab
 * disconnects one device).
 */

import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Netns, NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { relaySpec } from "../src/lab/control/relay.ts";
import { nativeTool } from "../src/lab/native.ts";
import { isAlive, type ProcessRecord, startProcess, stopProcess } from "../src/lab/supervisor.ts";

const enabled = privilegedTestsEnabled("lab: management relay", ["ip", "gcc"]);

/** Runs a short node script inside the namespace and returns its stdout. */
async function nodeIn(ns: Netns, script: string): Promise<string> {
  const r = await ns.exec([process.execPath, "-e", script], { allowFailure: true, timeoutMs: 15_000 });
  return r.stdout.trim();
}

describe.runIf(enabled)("ns-relay", { timeout: 60_000 }, () => {
  const scope = new NetnsScope("labrelay");
  let dir: string;
  let ns: Netns;
  let server: Server;
  let port: number;
  const accepted: Socket[] = [];
  let relay: ProcessRecord;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tern-relay-"));
    await chmod(dir, 0o755);
    ns = await scope.netns("edge");
    server = createServer((sock) => {
      accepted.push(sock);
      sock.on("data", (d) => {
        if (d.toString().startsWith("GET ")) sock.end("HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello");
      });
      sock.on("error", () => {});
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    if (relay) await stopProcess(relay);
    server?.close();
    await scope.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it("the root namespace's loopback is not reachable from a lab namespace", async () => {
    const out = await nodeIn(
      ns,
      `fetch("http://127.0.0.1:${port}/").then(() => console.log("reached"), () => console.log("refused"))`,
    );
    expect(out).toBe("refused");
  });

  it("reaches it through ns-relay, at the same address and port inside the namespace", async () => {
    const bin = await nativeTool("ns-relay", join(dir, "bin"));
    const spec = relaySpec({
      bin,
      labDir: dir,
      name: "edge",
      netns: ns.name,
      listenAddress: "127.0.0.1",
      port,
      serverPort: port,
    });
    relay = await startProcess(spec, "labrelay-test");
    const out = await nodeIn(
      ns,
      `(async () => { for (let i = 0; i < 50; i++) { try { const r = await fetch("http://127.0.0.1:${port}/"); console.log(r.status, await r.text()); return; } catch { await new Promise((r) => setTimeout(r, 50)); } } console.log("unreachable"); })()`,
    );
    expect(out).toBe("200 hello");
  });

  it("cuts open connections when the relay stops", async () => {
    // A long-lived client inside the namespace (like an agent's websocket) prints when its connection closes.
    const client = ns.exec(
      [
        process.execPath,
        "-e",
        `const s = require("net").connect(${port}, "127.0.0.1", () => console.log("open")); s.on("close", () => console.log("closed")); s.on("error", () => {});`,
      ],
      { allowFailure: true, timeoutMs: 20_000 },
    );
    const before = accepted.length;
    for (let i = 0; i < 100 && accepted.length === before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(accepted.length).toBe(before + 1);
    const serverSide = accepted.at(-1)!;
    const closed = new Promise((r) => serverSide.once("close", r));
    await stopProcess(relay);
    expect(await isAlive(relay)).toBe(false);
    await closed;
    expect((await client).stdout.trim().split("\n")).toEqual(["open", "closed"]);
  });
});
