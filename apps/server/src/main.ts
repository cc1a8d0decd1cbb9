/** `npm start`: the same as `tern-server serve` (commands/serve.ts). */

import { processIo } from "./commands/process-io.ts";
import { runCli } from "./commands/program.ts";

process.exit(await runCli(["serve"], processIo()));
