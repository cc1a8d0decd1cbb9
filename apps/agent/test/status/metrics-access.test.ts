/** The agent's metrics endpoint is open on loopback only; on any other address it needs the token from the state directory. */
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { type Endpoint, metricsTokenFile, startMetrics } from "../../src/daemon/endpoints.ts";
import { silentLogger } from "../../src/log.ts";
import { isLoopbackHost } from "../../src/metrics/index.ts";

let endpoint: Endpoint | null = null;
let dir = "";
afterEach(async () => {
  await endpoint?.close();
  endpoint = null;
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("agent metrics access", () => {
  it("knows loopback addresses", () => {
    for (const h of ["127.0.0.1", "127.3.2.1", "::1", "localhost", "::ffff:127.0.0.1"]) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ["0.0.0.0", "::", "192.168.1.1", "10.0.0.1", "127.example.net"]) expect(isLoopbackHost(h), h).toBe(false);
  });

  it("on a loopback address: open, no token file", async () => {
    dir = await mkdtemp(join(tmpdir(), "tern-metrics-"));
    endpoint = await startMetrics(new Registry(), { host: "127.0.0.1", port: 0 }, silentLogger, () => {}, dir);
    expect((await fetch(`http://127.0.0.1:${endpoint!.port}/metrics`)).status).toBe(200);
    await expect(stat(metricsTokenFile(dir))).rejects.toThrow();
  });

  it("on every address: 401 without the token kept 0600 in the state directory, 200 with it", async () => {
    dir = await mkdtemp(join(tmpdir(), "tern-metrics-"));
    endpoint = await startMetrics(new Registry(), { host: "0.0.0.0", port: 0 }, silentLogger, () => {}, dir);
    const url = `http://127.0.0.1:${endpoint!.port}/metrics`;
    const none = await fetch(url);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    expect((await fetch(url, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const token = (await readFile(metricsTokenFile(dir), "utf8")).trim();
    expect((await stat(metricsTokenFile(dir))).mode & 0o777).toBe(0o600);
    expect((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });
});
