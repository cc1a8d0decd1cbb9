/**
 * The server's settings for a command: the environment (and --settings, the
 * same KEY=value file systemd gives the service; not --env-file, which Node 20
 * takes for its own option even after the script name), overridden by command-line options,
 * parsed once by loadConfig. Every command of one server sees the same
 * settings, so `tern-server admin …` reaches the database `serve` uses.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseEnv } from "node:util";
import { loadConfig, type ServerConfig } from "../config.ts";
import { CliError } from "./cli-error.ts";
import type { CliIo } from "./io.ts";

/** Options every command accepts (program-level). */
export interface GlobalOptions {
  settings?: string;
  dataDir?: string;
  debug?: boolean;
}

/** The environment the settings come from: the --settings's variables under the process's own. */
export async function commandEnv(io: CliIo, globals: GlobalOptions): Promise<Record<string, string | undefined>> {
  if (!globals.settings) return io.env;
  const file = path.resolve(io.cwd, globals.settings);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new CliError(
      `cannot read the settings file ${file} (${(err as NodeJS.ErrnoException).code})`,
      "check the --settings path",
    );
  }
  return { ...parseEnv(text), ...io.env };
}

/** Parsed settings, TERN_DATA_DIR made absolute; a bad setting is a CliError naming each variable. */
export async function loadSettings(
  io: CliIo,
  globals: GlobalOptions,
  overrides: Record<string, string> = {},
): Promise<ServerConfig> {
  const env = { ...(await commandEnv(io, globals)), ...overrides };
  if (globals.dataDir) env.TERN_DATA_DIR = globals.dataDir;
  let config: ServerConfig;
  try {
    config = loadConfig(env);
  } catch (err) {
    const problems = (err as Error).message
      .split("\n")
      .slice(1)
      .map((l) => l.trim())
      .join("; ");
    throw new CliError(
      `invalid configuration: ${problems}`,
      `fix ${problems.includes(";") ? "these variables" : "this variable"} in the environment${globals.settings ? ` or ${globals.settings}` : ""} (docs/server.md lists every setting)`,
      1,
      { cause: err },
    );
  }
  config.TERN_DATA_DIR = path.resolve(io.cwd, config.TERN_DATA_DIR);
  return config;
}
