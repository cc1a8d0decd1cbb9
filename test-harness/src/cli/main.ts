#!/usr/bin/env node
/**
 * `npm run lab -- <command>`: network-namespace labs from topology files.
 * The only place that reads process.env and process.argv.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { LabError, LabErrorCode } from "../errors.ts";
import { DEFAULT_STATE_ROOT } from "../lab/paths.ts";
import { downCommand } from "./commands/down.ts";
import { drawCommand } from "./commands/draw.ts";
import { drillCommand } from "./commands/drill.ts";
import { execCommand } from "./commands/exec.ts";
import { impairCommand } from "./commands/impair.ts";
import { statusCommand } from "./commands/status.ts";
import { upCommand } from "./commands/up.ts";
import type { CliContext } from "./context.ts";

const USAGE = `usage: npm run lab -- <command> [options]

  up <topology.yaml> [--no-control] [--impair-backend auto|netem|emulated] [--port N] [--keep-on-failure]
        build the lab (again: converge it); --no-control builds the network only
  status [lab] [--json]                 what is running where
  impair [--lab L] <link> [--loss PCT] [--delay MS] [--jitter MS] [--rate MBIT|none] [--clear]
        change a live link; <link> is <cloud>, <node>, <cloud>:<node> or <node>:<ifname>
  exec [--lab L] <node> [-- command ...]   run a command (default: a shell) in a node's namespace
  agent [--lab L] <edge> start|stop|kill   fault drills: an edge's agent (kill = kill -9, its daemons live on)
  link [--lab L] <edge> down|up            cut or restore an edge's control link (its relay)
  server [--lab L] restart                 restart the management server
  down [lab|topology.yaml]              remove everything the lab made
  draw <topology.yaml>                  print the lab as a Mermaid flowchart (nothing is built)

  --state-dir DIR   where labs keep their state (default: $TERN_LAB_DIR or <repo>/.lab)
  see docs/lab.md`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "no-control": { type: "boolean", default: false },
      "impair-backend": { type: "string", default: "auto" },
      port: { type: "string" },
      "keep-on-failure": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      lab: { type: "string" },
      loss: { type: "string" },
      delay: { type: "string" },
      jitter: { type: "string" },
      rate: { type: "string" },
      clear: { type: "boolean", default: false },
      "state-dir": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }
  const ctx: CliContext = {
    stateRoot: resolve(values["state-dir"] ?? process.env.TERN_LAB_DIR ?? DEFAULT_STATE_ROOT),
    databaseUrl: process.env.DATABASE_URL || undefined,
    admin:
      process.env.TERN_ADMIN_EMAIL && process.env.TERN_ADMIN_PASSWORD
        ? { email: process.env.TERN_ADMIN_EMAIL, password: process.env.TERN_ADMIN_PASSWORD }
        : undefined,
    shell: process.env.SHELL || "/bin/bash",
    out: (line) => console.log(line),
  };
  const usage = (msg: string) => new LabError(LabErrorCode.USAGE, `${msg}\n\n${USAGE}`);
  switch (command) {
    case "up": {
      if (!rest[0]) throw usage("up needs a topology file");
      const backend = values["impair-backend"];
      if (!["auto", "netem", "emulated"].includes(backend)) throw usage(`--impair-backend must be auto, netem or emulated`);
      const port = values.port === undefined ? undefined : Number(values.port);
      if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw usage("--port must be a TCP port");
      await upCommand(ctx, rest[0], { control: !values["no-control"], backend, port, keep: values["keep-on-failure"] });
      return 0;
    }
    case "down":
      await downCommand(ctx, rest[0]);
      return 0;
    case "draw":
      if (!rest[0]) throw usage("draw needs a topology file");
      await drawCommand(ctx, rest[0]);
      return 0;
    case "status":
      await statusCommand(ctx, rest[0], values.json);
      return 0;
    case "impair":
      if (!rest[0]) throw usage("impair needs a link");
      await impairCommand(ctx, values.lab, rest[0], values);
      return 0;
    case "agent":
    case "link":
    case "server":
      await drillCommand(ctx, values.lab, command, rest);
      return 0;
    case "exec":
      if (!rest[0]) throw usage("exec needs a node");
      return execCommand(ctx, values.lab, rest[0], rest.slice(1));
    default:
      throw usage(`unknown command '${command}'`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof LabError) {
      console.error(`lab: error [${err.code}]: ${err.message}`);
      process.exitCode = err.code === LabErrorCode.USAGE ? 2 : 1;
    } else if ((err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      console.error(`lab: error [USAGE]: ${(err as Error).message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else {
      console.error(`lab: ${(err as Error).stack ?? err}`);
      process.exitCode = 1;
    }
  },
);
