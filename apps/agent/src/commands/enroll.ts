/**
 * `tern-agent enroll --server URL --token TOKEN`: what an admin runs once on a router after installing the
 * package. It registers through the one registration path (`register`, which stores the device credentials
 * and the server in <state-dir>/device.json, 0600), then enables and (re)starts the service so the agent runs
 * now and after every boot. Where systemd does not manage the machine (a container, a CI job), nothing is
 * started: it says so and how to run the agent instead. --no-start registers only.
 */
import { access } from "node:fs/promises";
import { type CliDeps, pathsOf } from "./deps.ts";
import { register } from "./register.ts";

export const SERVICE = "tern-agent.service";

/** sd_booted(): systemd is the running service manager when /run/systemd/system exists. */
async function systemdRuns(): Promise<boolean> {
  return access("/run/systemd/system").then(
    () => true,
    () => false,
  );
}

export async function enroll(cli: CliDeps, systemdBooted: () => Promise<boolean> = systemdRuns): Promise<number> {
  const code = await register(cli);
  if (code !== 0) return code;
  const { options, runner, io } = cli;
  if (options.noStart) {
    io.out(`not started (--no-start): systemctl enable --now ${SERVICE} starts it\n`);
    return 0;
  }
  if (options.mode !== "system") {
    io.out(`standalone mode: start the agent yourself: tern-agent run --mode standalone --state-dir ${options.stateDir}\n`);
    return 0;
  }
  if (!(await systemdBooted())) {
    io.out(
      `systemd is not running on this machine, so nothing was started: run \`tern-agent run\` under the service manager you use (credentials in ${pathsOf(options).device})\n`,
    );
    return 0;
  }
  // restart, not start: a re-enrolment must reach a running agent, which read the old credentials.
  await runner.run(["systemctl", "enable", SERVICE], { timeoutMs: 60_000 });
  await runner.run(["systemctl", "restart", SERVICE], { timeoutMs: 60_000 });
  io.out(`started ${SERVICE} (enabled at boot); follow it with: journalctl -u tern-agent -f\n`);
  return 0;
}
