/**
 * `tern-agent run`: the daemon. The tunnel prober (main.ts makes it) is the
 * agent's TunnelQualitySource and the policy driver's measurements; the
 * agent configures it after every successful apply and at start. Resolves
 * after SIGTERM/SIGINT, once everything stopped, or after a `restart-agent`
 * action with RESTART_EXIT_CODE.
 */
import { loadTrust } from "../control/tls.ts";
import { checkServerTransport } from "../control/urls.ts";
import { Agent } from "../daemon/index.ts";
import { loadCredentials, machineId } from "../identity/index.ts";
import { createLogger } from "../log.ts";
import { SystemHealth } from "../status/index.ts";
import { parseTrustedKeys } from "../upgrade/trust.ts";
import { type CliDeps, hostnameOf, pathsOf } from "./deps.ts";

/** Exit status after a `restart-agent` action (EX_TEMPFAIL): the supervisor (systemd `Restart=always`, the lab) starts the agent again. */
export const RESTART_EXIT_CODE = 75;

export async function run({ options, runner, drivers, health, tunnels, wans, stopSignal, launch }: CliDeps): Promise<number> {
  const paths = pathsOf(options);
  const log = createLogger(options.logLevel, paths.logFile);
  const credentials = await loadCredentials(paths.device);
  // Refused before anything starts: an unencrypted link to another host needs --insecure (at register or here).
  if (credentials) checkServerTransport(credentials.server, options.insecure || credentials.insecure === true);
  const trust = credentials ? await loadTrust(options.caFile ?? credentials.caFile) : null;
  let restartAsked = false;
  let wakeForRestart: () => void = () => {};
  const restart = new Promise<void>((resolve) => {
    wakeForRestart = resolve;
  });
  // An installed upgrade stops this agent (the guard starts the new version, or the service manager does).
  const upgradeStop = new AbortController();
  const upgradeKeys = parseTrustedKeys(options.upgradeKeys);
  const agent = new Agent({
    paths,
    mode: options.mode,
    drivers,
    runner,
    log,
    machineId: credentials?.machineId ?? (await machineId(options.mode, paths.machineId)),
    hostname: hostnameOf(options),
    credentials,
    statusIntervalMs: options.statusIntervalMs,
    metrics: options.metricsPort === 0 ? null : { host: options.metricsHost, port: options.metricsPort },
    ui: options.uiPort === 0 ? null : { host: options.uiHost, port: options.uiPort },
    health: health === undefined ? new SystemHealth() : health,
    ca: trust?.ca,
    ...(tunnels ? { tunnels } : {}),
    ...(wans ? { wans } : {}),
    onRestart: () => {
      restartAsked = true;
      wakeForRestart();
    },
    upgrade: { keys: upgradeKeys, launch, stop: () => upgradeStop.abort() },
  });
  log.info("tern-agent starting", {
    mode: options.mode,
    stateDir: paths.stateDir,
    runDir: paths.runDir,
    server: credentials?.server ?? null,
  });
  await agent.start();
  if (!stopSignal?.aborted)
    await Promise.race([
      restart,
      new Promise((r) => upgradeStop.signal.addEventListener("abort", r, { once: true })),
      ...(stopSignal ? [new Promise((r) => stopSignal.addEventListener("abort", r, { once: true }))] : []),
    ]);
  await agent.stop();
  if (restartAsked) log.info("restarting: the server asked (restart-agent)");
  log.flush();
  return restartAsked ? RESTART_EXIT_CODE : 0;
}
