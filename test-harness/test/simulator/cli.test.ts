/** The simulator CLI as a separate process against the fake gateway. */
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseCli } from "../../src/simulator/cli.ts";
import { FakeServer } from "../../src/simulator/fake-server/server.ts";
import { TOKEN } from "./helpers.ts";

const cli = fileURLToPath(new URL("../../src/simulator/cli.ts", import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

let server: FakeServer;
beforeEach(async () => {
  server = await FakeServer.start({ statusIntervalMs: 200 });
});
afterEach(async () => {
  await server.stop();
});

describe("simulator CLI", () => {
  it("runs a fleet for --duration and prints JSON progress and a summary", async () => {
    const run = await execa(
      process.execPath,
      [
        "--import",
        tsx,
        cli,
        "--server",
        server.url,
        "--token",
        TOKEN,
        "--count",
        "20",
        "--tunnels",
        "4",
        "--rtt",
        "33",
        "--duration",
        "1.5",
        "--json",
      ],
      { timeout: 60_000 },
    );
    const lines = run.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const connected = lines.find((l) => l.kind === "connected");
    const summary = lines.at(-1)!;
    expect(connected).toMatchObject({ devices: 20, registered: 20, ready: 20, failures: 0 });
    expect(summary.kind).toBe("summary");
    expect(summary.statusSent as number).toBeGreaterThan(20);
    expect(typeof summary.bytesPerDevice).toBe("number");
    expect(server.devices.size).toBe(20);
    const statuses = [...server.devices.values()].flatMap((d) => d.messages.filter((m) => m.type === "status"));
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.every((s) => s.type === "status" && s.tunnels.length === 4 && s.tunnels[0]!.rtt === 33)).toBe(true);
    expect([...server.devices.values()].every((d) => d.invalid.length === 0)).toBe(true);
  });

  it("--register-only registers every device and exits 0 without connecting any", async () => {
    const run = await execa(
      process.execPath,
      ["--import", tsx, cli, "--server", server.url, "--token", TOKEN, "--count", "3", "--register-only", "--json"],
      { timeout: 60_000 },
    );
    const summary = JSON.parse(
      run.stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .at(-1)!,
    ) as Record<string, unknown>;
    expect(summary).toMatchObject({ kind: "summary", devices: 3, registered: 3, ready: 0 });
    expect(server.devices.size).toBe(3);
    expect([...server.devices.values()].every((d) => d.link === null && !d.counts.hello)).toBe(true);
  });

  it("exits 2 with the usage on missing or bad arguments", async () => {
    const run = await execa(process.execPath, ["--import", tsx, cli, "--count", "3"], { reject: false });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--server, --token and --count are required/);
    expect(() => parseCli(["--server", "http://x", "--token", "t", "--count", "x"])).toThrow(/--count must be a number/);
    expect(
      parseCli(["--server", "http://x", "--token", "t", "--count", "2", "--fail-driver", "bgp", "--down"]).input,
    ).toMatchObject({
      count: 2,
      apply: { failDriver: "bgp" },
      metrics: { up: false },
    });
  });

  it("exits 1 with the server's reason when registration is refused", async () => {
    const run = await execa(process.execPath, ["--import", tsx, cli, "--server", server.url, "--token", "nope", "--count", "2"], {
      reject: false,
      timeout: 60_000,
    });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/error: register tern-sim-000000: HTTP 401/);
  });
});
