/**
 * The control plane of a lab, as data: the management server (root
 * namespace, loopback), a relay per edge (or one on the management node), and
 * one agent per edge. planControl() computes every command line from the lab
 * plan (pure); describeControl() is what `lab up --no-control` prints instead
 * of running them.
 */
import { randomBytes } from "node:crypto";
import type { LabPlan } from "../../plan/types.ts";
import type { ProcessSpec } from "../supervisor.ts";
import { type AgentOptions, agentSpec, registerArgv } from "./agents.ts";
import { relaySpec } from "./relay.ts";
import { serverSpec } from "./server.ts";

export interface ControlInput {
  plan: LabPlan;
  labId: string;
  labDir: string;
  repoRoot: string;
  nsOf: (node: string) => string;
  port: number;
  databaseUrl?: string;
  /** More of the server's settings (`serverSpec`'s `env`). */
  serverEnv?: Record<string, string>;
  relayBin: string;
  /** Kept from an earlier run, or given by the user (TERN_ADMIN_EMAIL/PASSWORD); a new random password otherwise. */
  admin?: { email: string; password: string };
}

export interface ControlPlan {
  apiUrl: string;
  admin: { email: string; password: string };
  server: ProcessSpec;
  relays: ProcessSpec[];
  /** One per edge, in plan order. */
  agents: AgentOptions[];
  /** The server URL as each agent sees it. */
  agentServerUrl: string;
  databaseUrl?: string;
  serverEnv?: Record<string, string>;
}

/** The machine id the lab gives an edge's agent: stable per lab and edge. */
export const labMachineId = (labId: string, edge: string) => `tern-lab-${labId}-${edge}`;

export function planControl(c: ControlInput): ControlPlan {
  const admin = c.admin ?? { email: `admin@${c.plan.name}.lab`, password: randomBytes(12).toString("base64url") };
  const cloud = c.plan.control.via === "cloud" ? c.plan.control : null;
  const relay = (name: string, listenAddress: string) =>
    relaySpec({
      bin: c.relayBin,
      labDir: c.labDir,
      name,
      netns: c.nsOf(name),
      listenAddress,
      port: c.port,
      serverPort: c.port,
    });
  const relays = cloud ? [relay(cloud.node, cloud.address)] : c.plan.edges.map((edge) => relay(edge, "127.0.0.1"));
  const agentServerUrl = `http://${cloud ? cloud.address : "127.0.0.1"}:${c.port}`;
  return {
    apiUrl: `http://127.0.0.1:${c.port}`,
    admin,
    server: serverSpec({
      repoRoot: c.repoRoot,
      labDir: c.labDir,
      port: c.port,
      databaseUrl: c.databaseUrl,
      admin,
      ...(c.serverEnv ? { env: c.serverEnv } : {}),
    }),
    relays,
    agents: c.plan.edges.map((edge) => ({
      repoRoot: c.repoRoot,
      labDir: c.labDir,
      edge,
      netns: c.nsOf(edge),
      serverUrl: agentServerUrl,
      machineId: labMachineId(c.labId, edge),
    })),
    agentServerUrl,
    ...(c.databaseUrl ? { databaseUrl: c.databaseUrl } : {}),
    ...(c.serverEnv ? { serverEnv: c.serverEnv } : {}),
  };
}

const show = (s: { argv: string[]; netns?: string; env?: Record<string, string> }) => {
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
    `then, as admin ${cp.admin.email}: POST /api/tokens, and in each edge:`,
    ...cp.agents.map((a) => `agent ${a.edge}: ${registerArgv(a, "<registration token>").join(" ")}`),
    `then PUT /api/devices/{id} {isApproved: true, interfaces: WAN/LAN as planned}, and in each edge:`,
    ...cp.agents.map((a) => `agent ${a.edge}: ${show(agentSpec(a))}`),
    `then wait until every device is connected and its jobs are complete (agents use ${cp.agentServerUrl})`,
  ];
}
