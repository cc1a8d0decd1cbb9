/** Process entry of `tern-agent` (bin/tern-agent runs its bundle, dist/cli.js): the only place that reads process.env. */
import { main } from "./main.ts";

const stop = new AbortController();
for (const signal of ["SIGTERM", "SIGINT"] as const)
  process.on(signal, () => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort();
  });

const code = await main(process.argv.slice(2), {
  env: process.env,
  io: { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) },
  stopSignal: stop.signal,
  launch: {
    node: [process.execPath, ...process.execArgv],
    launcher: process.argv[1] ?? "",
    args: process.argv.slice(2),
    cwd: process.cwd(),
    // Set by the systemd unit; a lab or a shell has no service manager that restarts the agent.
    serviceManaged: process.env.TERN_AGENT_SUPERVISOR === "systemd",
  },
});
process.exitCode = code;
// Drivers' watchers are unref'd; anything left (sockets closing) must not keep a finished command alive.
setTimeout(() => process.exit(code), 2000).unref();
