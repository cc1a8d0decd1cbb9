/**
 * The control plane of a lab: the management server (root namespace,
 * loopback), a relay per edge, and one agent per edge, registered and approved
 * through the REST API. planControl() computes every command line;
 * startControl() runs them with readiness waits; describeControl() is what
 * `lab up --no-control` prints instead.
 */
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { LabError, LabErrorCode } from "../../errors.ts";
import type { LabPlan } from "../../plan/types.ts";
import type { ProcessTable } from "../process-table.ts";
import type { PhaseTimer } from "../progress.ts";
import type { ProcessSpec } from "../supervisor.ts";
import { agentSpec } from "./agents.ts";
import { ApiClient, approveAll } from "./onboarding.ts";
import { relaySpec } from "./relay.ts";
import { READY_PATH, serverSpec, waitForHttp } from "./server.ts";

export { freeLoopbackPort, READY_PATH, waitForHttp } from "./server.ts";

export const CREDENTIALS_FILE = "credentials.json";

export interface ControlInput {
  plan: LabPlan;
  labId: string;
  labDir: string;
  repoRoot: string;
  nsOf: (node: string) => string;
  port: number;
  databaseUrl?: string;
  relayBin: string;
  /** Kept from an earlier run; a new random password otherwise. */
  admin?: { email: string; password: string };
}

export interface ControlPlan {
  apiUrl: string;
  admin: { email: string; password: string };
  server: ProcessSpec;
  relays: ProcessSpec[];
  /** Agents need the registration token, known only once the server runs. */
  agents: (registrationToken: string) => ProcessSpec[];
  machineIds: string[];
  /** The server URL as each agent sees it. */
  agentServerUrl: string;
}

export function planControl(c: ControlInput): ControlPlan {
  const admin = c.admin ?? { email: `admin@${c.plan.name}.lab`, password: randomBytes(12).toString("base64url") };
  const cloud = c.plan.control.via === "cloud" ? c.plan.control : null;
  const relays = cloud
    ? [
        relaySpec({
          bin: c.relayBin,
          labDir: c.labDir,
          name: cloud.node,
          netns: c.nsOf(cloud.node),
          listenAddress: cloud.address,
          port: c.port,
          serverPort: c.port,
        }),
      ]
    : c.plan.edges.map((edge) =>
        relaySpec({
          bin: c.relayBin,
          labDir: c.labDir,
          name: edge,
          netns: c.nsOf(edge),
          listenAddress: "127.0.0.1",
          port: c.port,
          serverPort: c.port,
        }),
      );
  const agentServerUrl = `http://${cloud ? cloud.address : "127.0.0.1"}:${c.port}`;
  const machineId = (edge: string) => `tern-lab-${c.labId}-${edge}`;
  return {
    apiUrl: `http://127.0.0.1:${c.port}`,
    admin,
    server: serverSpec({ repoRoot: c.repoRoot, labDir: c.labDir, port: c.port, databaseUrl: c.databaseUrl, admin }),
    relays,
    agents: (token) =>
      c.plan.edges.map((edge) =>
        agentSpec({
          repoRoot: c.repoRoot,
          labDir: c.labDir,
          edge,
          netns: c.nsOf(edge),
          serverUrl: agentServerUrl,
          registrationToken: token,
          machineId: machineId(edge),
        }),
      ),
    machineIds: c.plan.edges.map(machineId),
    agentServerUrl,
  };
}

const show = (s: ProcessSpec) => {
  const env = Object.entries(s.env ?? {})
    .filter(([k]) => !k.includes("PASSWORD") && !k.includes("TOKEN"))
    .map(([k, v]) => `${k}=${v}`);
  return [...(s.netns ? ["ip", "netns", "exec", s.netns] : []), ...(env.length > 0 ? ["env", ...env] : []), ...s.argv].join(" ");
};

/** What startControl would run, one line each (secrets left out). */
export function describeControl(cp: ControlPlan): string[] {
  return [
    `server (root namespace, ${cp.apiUrl}): ${show(cp.server)}`,
    ...cp.relays.map((r) => `relay ${r.key.split(":").at(-1)}: ${show(r)}`),
    ...cp.agents("<registration token>").map((a) => `agent ${a.key.split(":").at(-1)}: ${show(a)}`),
    `then: POST /api/tokens, agents register, PUT /api/devices/{id} {isApproved: true}, wait until connected (agents use ${cp.agentServerUrl})`,
  ];
}

/** Starts server, relays and agents, onboards the agents, one progress phase per step; returns the API URL and where credentials are. */
export async function startControl(
  cp: ControlPlan,
  procs: ProcessTable,
  labDir: string,
  timer: PhaseTimer,
): Promise<{ apiUrl: string; credentials: string }> {
  const credentials = join(labDir, CREDENTIALS_FILE);
  await timer.phase("management server ready", async () => {
    const { rec } = await procs.ensure(cp.server);
    await waitForHttp(`${cp.apiUrl}${READY_PATH}`, 60_000, () => procs.alive(rec.key)).catch(async (err: Error) => {
      // The log goes with the lab directory when a failed `up` cleans up: show its end here.
      throw new LabError(LabErrorCode.NOT_READY, `management server not ready: ${err.message}`, await logTail(cp.server.log, 8));
    });
    await writeFile(credentials, `${JSON.stringify({ apiUrl: cp.apiUrl, ...cp.admin }, null, 2)}\n`, { mode: 0o600 });
  });
  await timer.phase(
    "control relays",
    async () => {
      for (const relay of cp.relays) await procs.ensure(relay);
      return cp.relays.length;
    },
    (n) => String(n),
  );
  await timer.phase(
    "agents registered, approved, connected",
    async () => {
      const api = new ApiClient(cp.apiUrl);
      await api.login(cp.admin.email, cp.admin.password);
      const agents = cp.agents(await api.createRegistrationToken("lab"));
      for (const agent of agents) await procs.ensure(agent);
      await approveAll(api, cp.machineIds).catch(async (err: Error) => {
        const tails = await Promise.all(agents.map((a) => logTail(a.log, 4)));
        throw new LabError(LabErrorCode.NOT_READY, `agents not onboarded: ${err.message}`, tails.flat());
      });
      return agents.length;
    },
    (n) => String(n),
  );
  return { apiUrl: cp.apiUrl, credentials };
}

/** The admin account of a lab whose server already ran (a converging `up` must log in with it). */
export async function savedAdmin(labDir: string): Promise<{ email: string; password: string } | undefined> {
  const text = await readFile(join(labDir, CREDENTIALS_FILE), "utf8").catch(() => null);
  if (!text) return undefined;
  const { email, password } = JSON.parse(text) as { email: string; password: string };
  return { email, password };
}

async function logTail(path: string, lines: number): Promise<string[]> {
  return [`${path}:`, ...(await readFile(path, "utf8").catch(() => "")).trim().split("\n").slice(-lines)];
}
