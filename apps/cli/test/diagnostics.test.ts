/**
 * tern devices ping | traceroute | resolve | logs against a real server with
 * simulated routers. The simulator answers like an agent before streamed
 * diagnostics (one-shot ping and traceroute, no dns-lookup or log-read), so
 * this checks what the CLI prints of the stream, its JSON lines, the API's
 * refusals as exit codes, and the offline device; line-by-line streaming is
 * tested at the server (test/gateway/device-diagnostics.test.ts) and agent.
 */
import { createTernClient, ok, type TernClient } from "@tern/client";
import { useApiServer } from "@tern/client/test/support/api-server.ts";
import { type RegisteredDevices, registerDevices } from "@tern/client/test/support/devices.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatLogLine } from "../src/commands/device-diagnostics.ts";
import { useTern } from "./support/run-tern.ts";

const s = useApiServer();
const tern = useTern();
let admin: TernClient;
let routers: RegisteredDevices;
let name: string;
let offline: string;

beforeAll(async () => {
  admin = createTernClient({ baseUrl: s.url });
  await admin.login(s.admin.email, s.admin.password);
  const registration = await ok(admin.api.POST("/api/tokens", { body: { name: "cli diagnostics" } }));
  routers = await registerDevices(s.url, registration.token, 2);
  const [id, offlineId] = routers.ids as [string, string];
  name = (await ok(admin.api.GET("/api/devices/{id}", { params: { path: { id } } }))).name;
  offline = offlineId;
  for (const each of routers.ids)
    await ok(admin.api.PUT("/api/devices/{id}", { params: { path: { id: each } }, body: { isApproved: true } }));
  await routers.connect();
  const login = await tern.run(["login", "--server", s.url, "--email", s.admin.email, "--password-stdin"], {
    input: s.admin.password,
  });
  expect(login.code, login.stderr).toBe(0);
  for (;;) {
    const d = await ok(admin.api.GET("/api/devices/{id}", { params: { path: { id } } }));
    if (d.isConnected) break;
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(async () => {
  await routers?.stop();
});

describe("tern devices ping | traceroute | resolve", () => {
  it("ping prints the router's lines; --json prints each event as a JSON line, ending with the result", async () => {
    const human = await tern.run(["devices", "ping", name, "192.0.2.1", "--count", "2", "--interval", "200"]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^PING 192\.0\.2\.1: 2 packets transmitted, 2 received/m);
    expect(human.stderr).toMatch(/^ping on .+ \(job [0-9a-f-]{36}\)/m);

    const json = await tern.run(["devices", "ping", name, "192.0.2.1", "-c", "1", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const events = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; jobId?: string; result?: { transmitted: number } });
    expect(events.map((e) => e.type)).toEqual(["started", "lines", "result"]);
    expect(events[2]?.result?.transmitted).toBe(1);
    const job = await ok(admin.api.GET("/api/jobs/{id}", { params: { path: { id: events[0]!.jobId! } } }));
    expect(job).toMatchObject({ type: "ping", state: "complete" });
  });

  it("traceroute prints the hops", async () => {
    const r = await tern.run(["devices", "traceroute", name, "192.0.2.9", "--max-hops", "5"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("traceroute to 192.0.2.9");
  });

  it("resolve on a router whose agent cannot: exit 1 with DEVICE_REQUEST_FAILED", async () => {
    const r = await tern.run(["devices", "resolve", name, "example.com", "--type", "MX", "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr)).toMatchObject({ code: "DEVICE_REQUEST_FAILED" });
  });

  it("refusals: a bad target is the API's VALIDATION_FAILED (exit 1), a bad option a usage error (exit 2)", async () => {
    const bad = await tern.run(["devices", "ping", name, "-f", "--json"]);
    expect(bad.code).not.toBe(0);
    const target = await tern.run(["devices", "ping", name, "not a host", "--json"]);
    expect(target.code).toBe(1);
    expect(JSON.parse(target.stderr)).toMatchObject({ code: "VALIDATION_FAILED" });
    expect((await tern.run(["devices", "resolve", name, "example.com", "--type", "AXFR"])).code).toBe(2);
    expect((await tern.run(["devices", "logs", name, "--level", "loud"])).code).toBe(2);
  });

  it("tag:<tag> runs on every router with the tag, lines prefixed with each router's name, then a summary", async () => {
    await ok(admin.api.POST("/api/devices/tags", { body: { deviceIds: [...routers.ids], add: ["cli-branch"], remove: [] } }));
    for (const each of routers.ids)
      for (;;) {
        const d = await ok(admin.api.GET("/api/devices/{id}", { params: { path: { id: each } } }));
        if (d.isConnected) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    const r = await tern.run(["devices", "traceroute", "tag:cli-branch", "192.0.2.9"]);
    expect(r.code, r.stderr).toBe(0);
    const prefixed = r.stdout.split("\n").filter((l) => l.includes("traceroute to 192.0.2.9"));
    expect(prefixed).toHaveLength(2);
    expect(prefixed).toContain(`[${name}] traceroute to 192.0.2.9`);
    expect(r.stderr).toContain("traceroute on 2 devices tagged cli-branch: 2 succeeded, 0 failed");

    const none = await tern.run(["devices", "ping", "tag:nowhere", "192.0.2.1", "--json"]);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stderr)).toMatchObject({ code: "VALIDATION_FAILED" });
  });

  it("an offline router: exit 1 with DEVICE_NOT_CONNECTED, at once (both routers disconnect here)", async () => {
    await routers.disconnect();
    try {
      for (;;) {
        const d = await ok(admin.api.GET("/api/devices/{id}", { params: { path: { id: offline } } }));
        if (!d.isConnected) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const r = await tern.run(["devices", "ping", offline, "192.0.2.1", "--json"]);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stderr)).toMatchObject({ code: "DEVICE_NOT_CONNECTED" });
      const logs = await tern.run(["devices", "logs", offline, "--lines", "10", "--json"]);
      expect(logs.code).toBe(1);
      expect(JSON.parse(logs.stderr)).toMatchObject({ code: "DEVICE_NOT_CONNECTED" });
    } finally {
      await routers.connect();
    }
  });
});

describe("tern devices logs", () => {
  it("formats pino lines as time, level, message and the other fields", () => {
    expect(formatLogLine('{"level":40,"time":"2026-11-26T00:00:00.000Z","pid":7,"msg":"link lost","deviceId":"d1"}')).toBe(
      '2026-11-26T00:00:00.000Z WARN  link lost {"deviceId":"d1"}',
    );
    expect(formatLogLine("not json")).toBe("not json");
  });
});
