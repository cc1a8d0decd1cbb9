/**
 * The agent's side of a server's dump request: `dump-create` makes the
 * archive of `tern-agent dump` in <state-dir>/dumps (named for the host and
 * UTC time) and answers its size and SHA-256; `dump-read` hands it out in
 * chunks that put together give the same bytes; names outside the dumps
 * directory's pattern are refused before any file is touched. The running
 * agent talks to a fake control server over a real websocket; tar runs for real.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DUMP_CHUNK_BYTES, type DumpChunk, type DumpCreated } from "@tern/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { ExecRunner, type Runner } from "../../src/runner.ts";
import { type Harness, startAgent } from "../support/agent-harness.ts";
import { FakeControlServer } from "../support/fake-control-server.ts";
import { FakeSystem } from "../support/fake-system.ts";

describe("dump requests", () => {
  let server: FakeControlServer | null = null;
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.stop();
    await server?.stop();
    h = null;
    server = null;
  });

  it("makes the dump in the state dir's dumps folder and sends it in chunks with its checksum", async () => {
    server = await FakeControlServer.start();
    const sys = new FakeSystem([{ name: "wan0" }, { name: "lan0" }]);
    const exec = new ExecRunner();
    const runner: Runner = {
      run: (argv, o) => (["tar", "uname", "df"].includes(argv[0] ?? "") ? exec.run(argv, o) : sys.run(argv, o)),
    };
    h = await startAgent(server, { sys, runner });
    await server.waitFor("hello");
    // A big log, so the archive takes more than one chunk.
    await mkdir(join(h.dirs.stateDir, "logs"), { recursive: true });
    await writeFile(join(h.dirs.stateDir, "logs", "agent.log"), randomText(1_500_000), { mode: 0o644 });

    const made = await server.request("dump-create");
    expect(made.ok, made.error).toBe(true);
    const created = made.result as DumpCreated;
    expect(created.name).toMatch(/^tern-agent-dump-edge-test-\d{8}T\d{6}Z\.tar\.gz$/);
    const onDisk = await readFile(join(h.dirs.stateDir, "dumps", created.name));
    expect(created.size).toBe(onDisk.length);
    expect(created.sha256).toBe(createHash("sha256").update(onDisk).digest("hex"));
    expect(created.size).toBeGreaterThan(DUMP_CHUNK_BYTES);

    const parts: Buffer[] = [];
    for (let offset = 0; ; ) {
      const res = await server.request("dump-read", { name: created.name, offset, length: DUMP_CHUNK_BYTES });
      expect(res.ok, res.error).toBe(true);
      const chunk = res.result as DumpChunk;
      const bytes = Buffer.from(chunk.data, "base64");
      parts.push(bytes);
      offset += bytes.length;
      if (chunk.eof) break;
    }
    expect(parts.length).toBeGreaterThan(1);
    expect(Buffer.concat(parts).equals(onDisk)).toBe(true);
    const list = (await exec.run(["tar", "-tzf", join(h.dirs.stateDir, "dumps", created.name)])).stdout;
    expect(list).toContain("/README.txt");
    expect(list).toContain("/logs/agent.log");
  });

  it("refuses names outside the dumps pattern and dumps that do not exist", async () => {
    server = await FakeControlServer.start();
    h = await startAgent(server);
    await server.waitFor("hello");
    for (const name of ["../device.json", "/etc/passwd", "tern-agent-dump-x.tar.gz/../../device.json"]) {
      const res = await server.request("dump-read", { name, offset: 0, length: 10 });
      expect(res.ok, name).toBe(false);
      expect(res.error, name).toMatch(/INVALID_REQUEST/);
    }
    const missing = await server.request("dump-read", {
      name: "tern-agent-dump-none-20260101T000000Z.tar.gz",
      offset: 0,
      length: 10,
    });
    expect(missing.ok).toBe(false);
    expect(missing.error).toMatch(/NOT_FOUND/);
    const tooLong = await server.request("dump-read", {
      name: "tern-agent-dump-none-20260101T000000Z.tar.gz",
      offset: 0,
      length: DUMP_CHUNK_BYTES + 1,
    });
    expect(tooLong.error).toMatch(/INVALID_REQUEST/);
  });
});

/** Text that gzip cannot shrink much (so the archive spans chunks). */
function randomText(bytes: number): string {
  return Array.from({ length: Math.ceil(bytes / 88) }, (_, i) => createHash("sha512").update(String(i)).digest("base64"))
    .join("")
    .slice(0, bytes);
}
