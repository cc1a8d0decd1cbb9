// The lab's supervisor of one agent: runs argv and starts it again when it exits with status 75 (the agent's
// `restart-agent` action), as systemd's `Restart=always` does on a router. Plain JavaScript (no loader), run by
// the same node. It leads the process group the lab records: a group signal (lab down, stopAgent) reaches the
// agent directly, so it forwards nothing (a second SIGTERM would make the agent exit at once); after such a
// signal it stops restarting and exits with the agent's status.
import { spawn } from "node:child_process";
import { constants } from "node:os";

const RESTART_EXIT_CODE = 75;
const argv = process.argv.slice(2);
if (argv.length === 0) {
  process.stderr.write("usage: respawn.mjs <program> [args…]\n");
  process.exit(2);
}
let stopping = false;
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"])
  process.on(sig, () => {
    stopping = true;
  });

function start() {
  const child = spawn(argv[0], argv.slice(1), { stdio: "inherit" });
  child.on("exit", (code, signal) => {
    if (code === RESTART_EXIT_CODE && !stopping) {
      process.stdout.write(`respawn: ${argv[0]} asked for a restart (exit ${code}): starting it again\n`);
      setTimeout(start, 500);
      return;
    }
    process.exit(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 1));
  });
}
start();
