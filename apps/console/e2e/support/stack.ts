/**
 * The system the browser tests drive, in one child process of the Playwright
 * run (started by global-setup.ts with tsx): Tern's server from the source on
 * the embedded database (PGlite in a fresh data directory), the admin of a
 * new installation, a viewer member, 20 simulated routers from test-harness
 * (registered with a registration token like real agents, 15 approved, five
 * left pending, all connected), and the built console served over the same
 * origin as the API (vite preview proxying /api to the server, unless the
 * server serves the console itself).
 *
 *   tsx e2e/support/stack.ts <info.json>   writes StackInfo there when ready; SIGTERM stops everything.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createTernClient, ok } from "@tern/client";
import { loadConfig } from "@tern/server/src/config.ts";
import { startServer } from "@tern/server/src/server.ts";
import { insertInvitation } from "@tern/server/test/support/invitations.ts";
import { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { pino } from "pino";
import { preview } from "vite";
import type { StackInfo } from "./stack-info.ts";

const DEVICES = 20;
/** Left pending: approved by the tests one by one, live from elsewhere, two in bulk, and one that stays pending. */
const PENDING = 5;
const consoleDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const infoFile = process.argv[2];
if (!infoFile) throw new Error("usage: stack.ts <info.json>");

const serverLog = path.join(path.dirname(infoFile), "server.log");
const admin = { email: "admin@example.com", password: `admin-${randomBytes(6).toString("hex")}` };
const viewer = { email: "viewer@example.com", password: `viewer-${randomBytes(6).toString("hex")}` };
const dataDir = await mkdtemp(path.join(tmpdir(), "tern-console-e2e-"));

const server = await startServer(
  loadConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    TERN_DATA_DIR: dataDir,
    TERN_SECRET_KEY: randomBytes(32).toString("base64"),
    TERN_ADMIN_EMAIL: admin.email,
    TERN_ADMIN_PASSWORD: admin.password,
    TERN_PASSWORD_HASH_COST: "10",
    TERN_LOG_LEVEL: "silent",
    TERN_CONSOLE_DIR: path.join(consoleDir, "dist"),
    // Short timers, as the server's gateway tests use: devices come online in well under a second.
    TERN_DUTY_INTERVAL_MS: "200",
    TERN_INGEST_FLUSH_MS: "50",
    TERN_INSTANCE_HEARTBEAT_MS: "500",
    // Routers report status (tunnel loss/RTT/jitter included) every 2 s, so the charts have points.
    TERN_STATUS_INTERVAL_MS: "2000",
    // Statistics history: a raw row per 2 s of statuses, so the device page has a chart within seconds.
    TERN_STATS_RAW_INTERVAL_MS: "2000",
    TERN_API_RATE_TOKEN: "1000000",
    TERN_API_RATE_ADDRESS: "1000000",
    // Every spec file signs in through the page from 127.0.0.1, many times: more than the 30 per 5 minutes allowed by default.
    TERN_LOGIN_RATE_IP: "1000000",
  }),
  // Beside info.json (global-setup.ts removes that folder at the end): a failed test prints its tail (diagnose.ts).
  pino({ level: process.env.TERN_E2E_LOG_LEVEL ?? "warn" }, pino.destination({ dest: serverLog, sync: true })),
);

const tern = createTernClient({ baseUrl: server.url });
await tern.login(admin.email, admin.password);
const [org] = await ok(tern.api.GET("/api/organizations"));
if (!org) throw new Error("the new installation has no organization");
tern.org = org.id;

// A viewer member, joined by invitation like a real one (the invitation is written as POST /api/invitations would, minus the e-mail).
const invitation = await insertInvitation(server.deps.db, {
  orgId: org.id,
  scope: "organization",
  email: viewer.email,
  role: "viewer",
});
const accepted = await fetch(`${server.url}/api/invitations/accept`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ token: invitation.token, password: viewer.password }),
});
if (accepted.status !== 201) throw new Error(`viewer invitation: ${accepted.status} ${await accepted.text()}`);

// 20 routers enrol with a registration token; all but the last PENDING are approved; all connect.
const registration = await ok(tern.api.POST("/api/tokens", { body: { name: "e2e routers" } }));
const fleet = Simulator.create({
  server: server.url,
  token: registration.token,
  count: DEVICES,
  machinePrefix: "branch",
  reconnectMinMs: 100,
  reconnectMaxMs: 1000,
  connect: false,
  // The pending routers' first connection is refused (403) until approved: not a failure of the fleet.
  failFast: false,
});
await fleet.registerAll();
const ids = fleet.devices.map((d) => d.deviceId!);
// Approved as an administrator onboards a router: its WAN and LAN interfaces assigned (a tunnel needs an assigned WAN).
for (const id of ids.slice(0, -PENDING)) {
  const device = await ok(tern.api.GET("/api/devices/{id}", { params: { path: { id } } }));
  const [eth0, eth1] = ["eth0", "eth1"].map((name) => device.interfaces.find((i) => i.name === name)!);
  await ok(
    tern.api.PUT("/api/devices/{id}", {
      params: { path: { id } },
      body: {
        isApproved: true,
        interfaces: [
          { devId: eth0!.devId, name: eth0!.name, type: "WAN", isAssigned: true },
          { devId: eth1!.devId, name: eth1!.name, type: "LAN", isAssigned: true },
        ] as never,
      },
    }),
  );
}
// connectAll also starts the fleet's status reports (interfaces, tunnels with loss/RTT/jitter).
await fleet.connectAll();
// The pending routers keep trying to connect, as the agent does; the server lets them in once approved.
let stopped = false;
const retries = fleet.devices.slice(-PENDING).map(async (d) => {
  while (!stopped && !d.ready) {
    await d.connect().catch(() => {});
    if (!d.ready) await new Promise((r) => setTimeout(r, 300));
  }
});
// One tunnel between the first two routers, for the tunnel figures and charts.
const wanOf = async (id: string) => {
  const device = await ok(tern.api.GET("/api/devices/{id}", { params: { path: { id } } }));
  const wan = device.interfaces.find((i) => i.type === "WAN");
  if (!wan) throw new Error(`simulated device ${device.name} has no WAN interface`);
  return wan.id;
};
const [a, b] = [ids[0]!, ids[1]!];
await ok(
  tern.api.POST("/api/tunnels", {
    body: [{ deviceA: a, interfaceA: await wanOf(a), deviceB: b, interfaceB: await wanOf(b) }] as never,
  }),
);

const pending = await Promise.all(
  ids
    .slice(-PENDING)
    .map(async (id) => ({ id, name: (await ok(tern.api.GET("/api/devices/{id}", { params: { path: { id } } }))).name })),
);

// Same origin for the page and the API: the server itself when it serves the console, else vite preview in front of it.
const served = await fetch(`${server.url}/`, { headers: { accept: "text/html" } });
const servesConsole = served.ok && (served.headers.get("content-type") ?? "").includes("text/html");
await served.body?.cancel();
let consoleUrl = server.url;
let closePreview = async () => {};
if (!servesConsole) {
  process.env.TERN_CONSOLE_API = server.url;
  const vite = await preview({ root: consoleDir, logLevel: "warn", preview: { host: "127.0.0.1", port: 0, strictPort: false } });
  const address = vite.httpServer.address();
  if (!address || typeof address === "string") throw new Error("vite preview has no port");
  consoleUrl = `http://127.0.0.1:${address.port}`;
  closePreview = () => new Promise<void>((resolve) => vite.httpServer.close(() => resolve()));
}

const info: StackInfo = {
  consoleUrl,
  apiUrl: server.url,
  servedByServer: servesConsole,
  admin,
  viewer,
  orgId: org.id,
  devices: DEVICES,
  pending,
  tunnelDevice: a,
  serverLog,
};
// Written whole, then renamed: the parent never reads half a file.
await writeFile(`${infoFile}.tmp`, JSON.stringify(info));
await rename(`${infoFile}.tmp`, infoFile);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  stopped = true;
  await Promise.all(retries);
  await closePreview().catch(() => {});
  await fleet.stop().catch(() => {});
  await server.close().catch(() => {});
  await rm(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
// The parent's end (its stdin closes) stops the stack too, so no server outlives a crashed run.
process.stdin.on("end", () => void stop());
process.stdin.resume();
