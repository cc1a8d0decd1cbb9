/**
 * Starts a planned control plane, one progress phase per step: the server
 * (ready on GET /api/health), the relays, then onboarding through the REST API
 * (onboarding.ts). Also the pieces scenarios need to restart one part.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { LabError, LabErrorCode } from "../../errors.ts";
import type { LabPlan } from "../../plan/types.ts";
import type { ProcessTable } from "../process-table.ts";
import type { PhaseTimer } from "../progress.ts";
import { ApiClient } from "./api-client.ts";
import { onboard } from "./onboarding.ts";
import type { ControlPlan } from "./plan.ts";
import { READY_PATH, waitForHttp } from "./server.ts";

export const CREDENTIALS_FILE = "credentials.json";

export interface StartedControl {
  apiUrl: string;
  credentials: string;
  /** edge → device id. */
  devices: Record<string, string>;
}

/** Starts (or converges) the server, the relays and the agents, and onboards the agents. */
export async function startControl(
  cp: ControlPlan,
  plan: LabPlan,
  procs: ProcessTable,
  labDir: string,
  timer: PhaseTimer,
): Promise<StartedControl> {
  const credentials = join(labDir, CREDENTIALS_FILE);
  await timer.phase("management server ready (GET /api/health)", async () => {
    await startServer(cp, procs);
    // DATABASE_URL may hold a password: kept here (0600), not in state.json, for restarts of the server.
    const saved: SavedControl = {
      apiUrl: cp.apiUrl,
      ...cp.admin,
      ...(cp.databaseUrl ? { databaseUrl: cp.databaseUrl } : {}),
      ...(cp.serverEnv ? { serverEnv: cp.serverEnv } : {}),
    };
    await writeFile(credentials, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  });
  await timer.phase(
    "control relays",
    async () => {
      for (const relay of cp.relays) await procs.ensure(relay);
      return cp.relays.length;
    },
    (n) => String(n),
  );
  const api = new ApiClient(cp.apiUrl);
  await timer.phase("admin login (POST /api/users/login)", () => api.login(cp.admin.email, cp.admin.password));
  const devices = await onboard({
    api,
    plan,
    agents: cp.agents,
    procs,
    timer,
    logTail: (edge) => logTail(join(labDir, "nodes", edge, "agent", "logs", "agent.log"), 6),
  }).catch((err: Error) => {
    throw new LabError(LabErrorCode.NOT_READY, `agents not onboarded: ${err.message}`);
  });
  return { apiUrl: cp.apiUrl, credentials, devices };
}

/** Starts the server unless it runs, and waits until it answers (it must stay alive meanwhile). */
export async function startServer(cp: ControlPlan, procs: ProcessTable, timeoutMs = 120_000): Promise<void> {
  const { rec } = await procs.ensure(cp.server);
  await waitForHttp(`${cp.apiUrl}${READY_PATH}`, timeoutMs, () => procs.alive(rec.key)).catch(async (err: Error) => {
    // The log goes with the lab directory when a failed `up` cleans up: show its end here.
    throw new LabError(LabErrorCode.NOT_READY, `management server not ready: ${err.message}`, await logTail(cp.server.log, 8));
  });
}

/** The admin account of a lab whose server already ran (a converging `up` must log in with it). */
export async function savedAdmin(labDir: string): Promise<{ email: string; password: string } | undefined> {
  const saved = await savedCredentials(labDir);
  return saved ? { email: saved.email, password: saved.password } : undefined;
}

/** Everything credentials.json keeps: the admin, and the DATABASE_URL and settings the server was started with. */
export interface SavedControl {
  apiUrl: string;
  email: string;
  password: string;
  databaseUrl?: string;
  serverEnv?: Record<string, string>;
}

export async function savedCredentials(labDir: string): Promise<SavedControl | undefined> {
  const text = await readFile(join(labDir, CREDENTIALS_FILE), "utf8").catch(() => null);
  if (!text) return undefined;
  return JSON.parse(text) as SavedControl;
}

export async function logTail(path: string, lines: number): Promise<string[]> {
  return [`${path}:`, ...(await readFile(path, "utf8").catch(() => "")).trim().split("\n").slice(-lines)];
}
