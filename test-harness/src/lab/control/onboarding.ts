/**
 * Onboarding through the public REST API, the way an admin does it
 * (docs/server.md "Onboarding"): a registration token (`POST /api/tokens`),
 * `tern-agent register` on each edge, approval with the interface assignment
 * (`PUT /api/devices/{id}`), then the agents run, connect, and apply the
 * configuration their approval queued. Approval comes *before* `run`: an agent
 * refused as unapproved waits its longest back-off (60 s) before trying again.
 */
import { Device, Job, RegistrationTokenCreated } from "@tern/protocol";
import { z } from "zod";
import type { LabPlan } from "../../plan/types.ts";
import { eachLimited } from "../network.ts";
import type { ProcessTable } from "../process-table.ts";
import type { PhaseTimer } from "../progress.ts";
import { type AgentOptions, agentSpec, isRegistered, prepareAgentState, registerAgent } from "./agents.ts";
import type { ApiClient } from "./api-client.ts";
import { interfaceAssignment, staticRoutes } from "./assignment.ts";

export const filterParam = (filters: { key: string; op: string; val: unknown }[]) => JSON.stringify(filters);

/** Devices whose machine id is one of `machineIds` (`GET /api/devices` with an `in` filter). */
export async function devicesByMachineId(api: ApiClient, machineIds: string[]): Promise<Device[]> {
  return api.get("/api/devices", z.array(Device), {
    filter: filterParam([{ key: "machineId", op: "in", val: machineIds }]),
    limit: 1000,
  });
}

/** Jobs of some devices that are not finished yet, and the failed ones (newest first). */
export async function jobsOf(api: ApiClient, deviceIds: string[]): Promise<Job[]> {
  return api.get("/api/jobs", z.array(Job), {
    filter: filterParam([{ key: "device.id", op: "in", val: deviceIds }]),
    limit: 1000,
  });
}

export interface OnboardInput {
  api: ApiClient;
  plan: LabPlan;
  /** One per edge, in plan order. */
  agents: AgentOptions[];
  procs: ProcessTable;
  timer: PhaseTimer;
  /** For each wait (devices appear, connect, finish their jobs). */
  timeoutMs?: number;
  /** Log tails for error messages. */
  logTail: (edge: string) => Promise<string[]>;
}

/** Onboards every edge (converging: registered, approved or running ones are kept); returns edge → device id. */
export async function onboard(o: OnboardInput): Promise<Record<string, string>> {
  const timeoutMs = o.timeoutMs ?? 120_000;
  const { api, timer } = o;
  const machineIds = o.agents.map((a) => a.machineId);
  const edgeOf = new Map(o.agents.map((a) => [a.machineId, a.edge]));

  const unregistered: AgentOptions[] = [];
  for (const a of o.agents) {
    await prepareAgentState(a);
    if (!(await isRegistered(a.labDir, a.edge))) unregistered.push(a);
  }
  if (unregistered.length > 0) {
    const token = await timer.phase("registration token (POST /api/tokens)", async () => {
      const created = await api.post("/api/tokens", RegistrationTokenCreated, { name: `lab ${o.plan.name}` });
      return created.token;
    });
    await timer.phase(
      "agents registered (tern-agent register)",
      async () => {
        await eachLimited(unregistered, 2, (a) => registerAgent(a, token));
        return unregistered.map((a) => a.edge).join(", ");
      },
      (d) => d,
    );
  }

  const devices = await timer.phase(
    "devices approved, interfaces assigned (PUT /api/devices/{id})",
    async () => {
      const found = await devicesByMachineId(api, machineIds);
      const missing = machineIds.filter((m) => !found.some((d) => d.machineId === m));
      if (missing.length > 0)
        throw new Error(`registered but not listed by the server: ${missing.map((m) => edgeOf.get(m)).join(", ")}`);
      for (const d of found) {
        const edge = edgeOf.get(d.machineId)!;
        if (d.isApproved) continue;
        await api.call("PUT", `/api/devices/${d.id}`, z.unknown(), {
          // Routers sharing one LAN (a VRRP pair) have the same subnet on purpose.
          query: sharesLan(o.plan, edge) ? { allowOverlapping: "true" } : undefined,
          body: {
            name: edge,
            isApproved: true,
            interfaces: interfaceAssignment(o.plan, edge, d),
            staticRoutes: staticRoutes(o.plan, edge),
          },
        });
      }
      return found;
    },
    (found) => `${found.length}`,
  );
  const ids = Object.fromEntries(devices.map((d) => [edgeOf.get(d.machineId)!, d.id]));

  await timer.phase(
    "agents running (tern-agent run)",
    async () => {
      let started = 0;
      for (const a of o.agents) if ((await o.procs.ensure(agentSpec(a))).started) started++;
      return started;
    },
    (n) => `${n} started`,
  );

  await timer.phase("devices connected", () =>
    waitFor(timeoutMs, async () => {
      const now = await devicesByMachineId(api, machineIds);
      const waiting = now.filter((d) => !d.isConnected).map((d) => edgeOf.get(d.machineId)!);
      return waiting.length === 0 ? true : `not connected: ${waiting.join(", ")}`;
    }).catch(async (err: Error) => {
      throw await withTails(
        err,
        o,
        o.agents.map((a) => a.edge),
      );
    }),
  );

  await timer.phase("configuration applied (jobs complete)", () =>
    waitForConfigApplied(api, Object.values(ids), timeoutMs).catch(async (err: Error) => {
      throw await withTails(
        err,
        o,
        o.agents.map((a) => a.edge),
      );
    }),
  );
  return ids;
}

/** True when another edge is on one of this edge's LANs. */
export function sharesLan(plan: LabPlan, edge: string): boolean {
  const lans = new Set(plan.lanAttachments.filter((a) => a.node === edge).map((a) => a.lan));
  return plan.lanAttachments.some((a) => a.node !== edge && lans.has(a.lan) && plan.edges.includes(a.node));
}

/**
 * Waits until no job of the devices is queued or running and each device
 * reports its desired config applied; a failed newest job is an error with the
 * device's own words.
 */
export async function waitForConfigApplied(api: ApiClient, deviceIds: string[], timeoutMs = 120_000): Promise<void> {
  await waitFor(timeoutMs, async () => {
    const jobs = await jobsOf(api, deviceIds);
    const open = jobs.filter((j) => j.state === "queued" || j.state === "running");
    const failed = newestPerDevice(jobs).filter((j) => j.state === "failed");
    if (failed.length > 0)
      throw new Error(
        `jobs failed: ${failed.map((j) => `${j.device.name}: ${j.error?.reason ?? "?"}: ${j.error?.message ?? ""}`).join("; ")}`,
      );
    if (open.length > 0) return `jobs not finished: ${open.map((j) => `${j.device.name} ${j.type} ${j.state}`).join(", ")}`;
    const devices = await api.get("/api/devices", z.array(Device), { ids: deviceIds.join(","), limit: 1000 });
    const behind = devices.filter((d) => d.desiredHash !== d.appliedHash);
    return behind.length === 0 ? true : `applied config not reported yet: ${behind.map((d) => d.name).join(", ")}`;
  });
}

function newestPerDevice(jobs: Job[]): Job[] {
  const newest = new Map<string, Job>();
  for (const j of jobs) {
    const cur = newest.get(j.device.id);
    if (!cur || j.createdAt > cur.createdAt) newest.set(j.device.id, j);
  }
  return [...newest.values()];
}

/**
 * Polls `check` (every 500 ms) until it returns true; a string says what is
 * still missing and ends up in the time-out error. Errors thrown by `check`
 * end the wait at once.
 */
export async function waitFor(timeoutMs: number, check: () => Promise<true | string>, intervalMs = 500): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    const r = await check();
    if (r === true) return;
    last = r;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${last}`);
    await new Promise((res) => setTimeout(res, intervalMs));
  }
}

async function withTails(err: Error, o: OnboardInput, edges: string[]): Promise<Error> {
  const tails = (await Promise.all(edges.map((e) => o.logTail(e)))).flat();
  return new Error(`${err.message}\n${tails.join("\n")}`);
}
