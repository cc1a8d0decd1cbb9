/**
 * The real agent program (`apps/agent/bin/tern-agent`) in a lab router: one
 * command (`register`, `apply`, `plan`) or the daemon (`tern-agent run`),
 * with its own fake gateway in the router's namespace as control server.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ExecResult, run } from "@tern/netlab";
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import type { LabRouter } from "./lab.ts";

export const AGENT_BIN = fileURLToPath(new URL("../../../../apps/agent/bin/tern-agent", import.meta.url));

/**
 * The node flags the agent's bin starts with (its `#!/usr/bin/env -S node …` line) and the V8 flags it sets before
 * loading the bundle (`setFlagsFromString("…")`), for baselines of the same runtime.
 */
export function agentNodeFlags(): string[] {
  const text = readFileSync(AGENT_BIN, "utf8");
  const shebang = text.split("\n", 1)[0]!;
  const m = /^#!\/usr\/bin\/env(?: -S)? node(.*)$/.exec(shebang);
  if (!m) throw new Error(`${AGENT_BIN}: unexpected first line ${shebang}`);
  const atRunTime = [...text.matchAll(/^setFlagsFromString\("([^"]+)"\);$/gm)].map((f) => f[1]!);
  return [...m[1]!.trim().split(/\s+/).filter(Boolean), ...atRunTime.flatMap((f) => f.split(/\s+/))];
}

/** Options every tern-agent command of a lab router gets (standalone: the agent runs its daemons itself). */
export function agentArgs(r: LabRouter): string[] {
  return ["--state-dir", r.stateDir, "--mode", "standalone", "--hostname", `bench-${r.label}`];
}

/** Runs one tern-agent command inside the router; throws with its output when it fails. */
export async function agentCommand(r: LabRouter, args: string[], timeoutMs = 120_000): Promise<ExecResult> {
  const res = await run(["ip", "netns", "exec", r.ns.name, AGENT_BIN, ...args, ...agentArgs(r)], {
    allowFailure: true,
    timeoutMs,
  });
  if (res.exitCode !== 0)
    throw new Error(`tern-agent ${args[0]} in ${r.ns.name}: exit ${res.exitCode}: ${(res.stderr || res.stdout).trim()}`);
  return res;
}

/** `tern-agent run` inside the router, in its own process group; its pid is the agent's (ip netns exec and the bin exec in place). */
export class AgentDaemon {
  readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(readonly router: LabRouter) {
    this.child = spawn("ip", ["netns", "exec", router.ns.name, AGENT_BIN, "run", ...agentArgs(router)], {
      detached: true,
      stdio: "ignore",
    });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  async logTail(lines = 20): Promise<string> {
    const log = await readFile(join(this.router.stateDir, "logs", "agent.log"), "utf8").catch(() => "");
    return log.trimEnd().split("\n").slice(-lines).join("\n");
  }

  /** SIGTERM to the whole group, SIGKILL after 5 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(-this.pid, sig);
      } catch {
        // already gone
      }
    };
    kill("SIGTERM");
    const timer = setTimeout(() => kill("SIGKILL"), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** A router's agent connected to its own fake gateway: registered, running, said hello. */
export interface ManagedAgent {
  gateway: Worker;
  daemon: AgentDaemon;
  deviceId: string;
  /** From spawning `tern-agent run` to the gateway's hello from it (registration before, not counted). */
  connectedMs: number;
}

export async function startManagedAgent(r: LabRouter): Promise<ManagedAgent> {
  const gateway = spawnWorker(workerPath("agent-gateway"), { prefix: ["ip", "netns", "exec", r.ns.name] });
  let daemon: AgentDaemon | undefined;
  try {
    const { url, token } = (await gateway.ready) as { url: string; token: string };
    await agentCommand(r, ["register", "--server", url, "--token", token]);
    const t0 = performance.now();
    daemon = new AgentDaemon(r);
    const { deviceId } = await gateway.call<{ deviceId: string }>("waitDevice", { timeoutMs: 60_000 }).catch(async (err) => {
      throw new Error(`${(err as Error).message}\nagent log:\n${await daemon!.logTail()}`);
    });
    return { gateway, daemon, deviceId, connectedMs: performance.now() - t0 };
  } catch (err) {
    await daemon?.stop();
    await gateway.stop();
    throw err;
  }
}

export async function stopManagedAgent(a: ManagedAgent | undefined): Promise<void> {
  if (!a) return;
  await a.daemon.stop();
  await a.gateway.stop();
}
