/** System mode: the distro's own services, driven with systemctl. */
import type { Runner } from "../runner.ts";

/** True when `unit` is active. */
export async function serviceActive(runner: Runner, unit: string): Promise<boolean> {
  return (await runner.run(["systemctl", "is-active", "--quiet", unit], { allowFailure: true })).exitCode === 0;
}

/** `systemctl <verb> <unit>`; throws with systemctl's stderr when it fails. */
export async function systemctl(runner: Runner, verb: "start" | "stop" | "restart" | "reload", unit: string): Promise<void> {
  await runner.run(["systemctl", verb, unit], { timeoutMs: 60_000 });
}

/** Sends `signal` to a unit's main process (a reload for daemons whose unit has no ExecReload). */
export async function signalService(runner: Runner, unit: string, signal: string): Promise<void> {
  await runner.run(["systemctl", "kill", `--signal=${signal}`, "--kill-who=main", unit]);
}
