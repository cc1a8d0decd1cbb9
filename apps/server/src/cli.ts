/** Process entry of `tern-server` (bin/tern-server): the command line, with the process's environment and streams. */

import { processIo } from "./commands/process-io.ts";
import { runCli } from "./commands/program.ts";

// `tern-server migrate status | head`: a reader that stops early is not an error of ours.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});

const code = await runCli(process.argv.slice(2), processIo());
// A finished command exits even if a pool or timer it opened would linger; `serve` returns only once stopped.
process.exit(code);
