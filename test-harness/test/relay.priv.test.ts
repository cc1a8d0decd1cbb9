/**
 * The control-link seam: a server on the root namespace's loopback is not
 * reachable from a lab namespace, ns-relay makes it reachable (HTTP through
 * it), and stopping the relay cuts the connections through it (how the lab
 * disconnects one device).
 */

import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Netns, NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { relaySpec } from "../src/lab/control/relay.ts";
import { labDown } from "../src/lab/down.ts";
import { nativeTool } from "../src/lab/native.ts";
import { isAlive, type ProcessRecord, startProcess, stopProcess } from "../src/lab/supervisor.ts";
import { labUp } from "../src/lab/up.ts";
import { tempStateRoot } from "./helpers.ts";

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

describe.runIf(enabled)("control over a WAN cloud (control: { cloud })", { timeout: 60_000 }, () => {
  it("serves agents through a management node on the cloud, with that cloud's delay", async () => {
    const root = await tempStateRoot();
    const server = createServer((sock) =>
      sock.on("data", () => sock.end("HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")),
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      const file = join(root.root, "ctl.yaml");
      await writeFile(
        file,
        "name: ctl\nclouds:\n  - name: inet\n    impairment: { delayMs: 25 }\nedges:\n  - name: e1\n    wan: [{ cloud: inet }]\ncontrol: { cloud: inet }\n",
      );
      const { lab } = await labUp(file, { stateRoot: root.root, control: false });
      expect(lab.plan.control).toEqual({ via: "cloud", cloud: "inet", node: "mgmt", address: "100.64.2.2" });
      const bin = await nativeTool("ns-relay", join(root.root, ".bin"));
      await lab.procs.ensure(
        relaySpec({
          bin,
          labDir: lab.dir,
          name: "mgmt",
          netns: lab.nsName("mgmt"),
          listenAddress: "100.64.2.2",
          port,
          serverPort: port,
        }),
      );
      // From the edge, across the cloud (25 ms toward each node): a request and its answer cross it twice each way.
      const out = await nodeIn(
        lab.ns("e1"),
        `(async () => { for (let i = 0; i < 50; i++) { try { const t = performance.now(); const r = await fetch("http://100.64.2.2:${port}/"); console.log(r.status, Math.round(performance.now() - t)); return; } catch { await new Promise((r) => setTimeout(r, 50)); } } console.log("unreachable"); })()`,
      );
      const [status, ms] = out.split(" ").map(Number);
      expect(status).toBe(204);
      expect(ms).toBeGreaterThanOrEqual(50);
      await labDown(root.root, "ctl");
    } finally {
      server.close();
      await labDown(root.root, "ctl");
      await root.remove();
    }
  });
});
