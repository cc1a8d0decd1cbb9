/**
 * The control plane of a lab that is up, for fault drills (scenarios, and
 * anyone driving a lab by hand): log in as the lab's admin, stop and start an
 * agent (gracefully or with kill -9), cut and restore one device's control
 * link (its relay), restart the management server. Everything is found again
 * from the lab's state (port, credentials, recorded processes).
 */
import { readFile } from "node:fs/promises";
import { LabError, LabErrorCode } from "../../errors.ts";
import type { Lab } from "../lab.ts";
import { nativeTool } from "../native.ts";
import { binDir, REPO_ROOT } from "../paths.ts";
import { isAlive, signalProcess, stopProcess } from "../supervisor.ts";
import { type AgentOptions, agentKey, agentSpec } from "./agents.ts";
import { ApiClient } from "./api-client.ts";
import { type ControlPlan, planControl } from "./plan.ts";
import { savedCredentials, startServer } from "./start.ts";

export class LabControl {
  private constructor(
    readonly lab: Lab,
    readonly plan: ControlPlan,
  ) {}

  /** The control plane of `lab`; NOT_READY when the lab was built without one. */
  static async open(lab: Lab, opts: { repoRoot?: string } = {}): Promise<LabControl> {
    const c = lab.store.state.control;
    const saved = await savedCredentials(lab.dir);
    if (!c?.enabled || !saved)
      throw new LabError(LabErrorCode.NOT_READY, `lab '${lab.name}' has no control plane (built with --no-control?)`);
    const plan = planControl({
      plan: lab.plan,
      labId: lab.store.state.id,
      labDir: lab.dir,
      repoRoot: opts.repoRoot ?? REPO_ROOT,
      nsOf: (n) => lab.nsName(n),
      port: c.port,
      databaseUrl: saved.databaseUrl,
      serverEnv: saved.serverEnv,
      relayBin: await nativeTool("ns-relay", binDir(lab.stateRoot)),
      admin: { email: saved.email, password: saved.password },
    });
    return new LabControl(lab, plan);
  }

  get apiUrl(): string {
    return this.plan.apiUrl;
  }

  /** edge → device id, as onboarded. */
  get devices(): Record<string, string> {
    return this.lab.store.state.control?.devices ?? {};
  }

  /** A client logged in as the lab's admin. */
  async api(): Promise<ApiClient> {
    const api = new ApiClient(this.plan.apiUrl);
    await api.login(this.plan.admin.email, this.plan.admin.password);
    return api;
  }

  agent(edge: string): AgentOptions {
    const a = this.plan.agents.find((x) => x.edge === edge);
    if (!a) throw new LabError(LabErrorCode.NODE_NOT_FOUND, `'${edge}' is not an edge of lab '${this.lab.name}'`);
    return a;
  }

  /** The pid of an edge's running agent (the child of its respawn supervisor), or null. */
  async agentPid(edge: string): Promise<number | null> {
    const rec = this.lab.procs.get(agentKey(edge));
    if (!rec || !(await isAlive(rec))) return null;
    const children = await readFile(`/proc/${rec.pid}/task/${rec.pid}/children`, "utf8").catch(() => "");
    const child = Number(children.trim().split(/\s+/)[0]);
    return Number.isInteger(child) && child > 0 ? child : null;
  }

  /** Starts the edge's agent (`tern-agent run`) unless it runs. */
  async startAgent(edge: string): Promise<number> {
    return (await this.lab.procs.ensure(agentSpec(this.agent(edge)))).rec.pid;
  }

  /**
   * Stops the edge's agent: `term` is a clean stop (SIGTERM; the router stays
   * configured), `kill` is kill -9 of the agent alone (its daemons live on,
   * as after a crash).
   */
  async stopAgent(edge: string, how: "term" | "kill"): Promise<void> {
    const rec = this.lab.procs.get(agentKey(edge));
    if (!rec) return;
    if (how === "kill") {
      // The agent and its respawn supervisor (agents.ts) lead one group; its daemons have their own sessions.
      if (await isAlive(rec))
        try {
          process.kill(-rec.pid, "SIGKILL");
        } catch {
          await signalProcess(rec, "SIGKILL");
        }
      for (let i = 0; i < 250 && (await isAlive(rec)); i++) await new Promise((r) => setTimeout(r, 20));
    } else await stopProcess(rec, 15_000);
    await this.lab.store.update((s) => {
      s.processes = s.processes.filter((p) => p.key !== rec.key);
    });
  }

  /** Cuts the edge's control link: its relay stops, and every connection through it with it. */
  async disconnect(edge: string): Promise<void> {
    await this.lab.procs.stop(this.relayKey(edge));
  }

  /** Restores the edge's control link (the agent reconnects with its back-off). */
  async reconnect(edge: string): Promise<void> {
    const relay = this.plan.relays.find((r) => r.key === this.relayKey(edge));
    if (!relay) throw new LabError(LabErrorCode.NODE_NOT_FOUND, `no relay for '${edge}'`);
    await this.lab.procs.ensure(relay);
  }

  /** Stops the server (SIGTERM: it finishes in-flight requests and closes device links) and starts it again. */
  async restartServer(): Promise<void> {
    await this.lab.procs.stop(this.plan.server.key, 20_000);
    await startServer(this.plan, this.lab.procs);
  }

  private relayKey(edge: string): string {
    if (this.lab.plan.control.via === "cloud")
      throw new LabError(LabErrorCode.USAGE, "with control over a cloud all edges share one relay: impair the cloud instead");
    return `control:relay:${edge}`;
  }
}
