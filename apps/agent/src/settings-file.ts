/**
 * The agent's settings file (`/etc/tern/agent.yaml` on a router, the package's conffile): the same settings as
 * the common flags, by flag name (`log-level: debug`). It is the lowest layer: a flag wins over its environment
 * variable, which wins over the file. Read only by an explicit `--config FILE` / `TERN_AGENT_CONFIG`, or in system
 * mode from the default path when that exists (lab agents in standalone mode never pick up a router's file).
 */
import { readFile } from "node:fs/promises";
import * as z from "zod";
import { AgentError, formatIssues } from "./errors.ts";
import { COMMON_OPTIONS } from "./options.ts";

export const DEFAULT_SETTINGS_FILE = "/etc/tern/agent.yaml";

const Value = z.union([z.string(), z.number(), z.boolean()]).transform(String);
const SettingsFile = z
  .strictObject(Object.fromEntries(Object.keys(COMMON_OPTIONS).map((k) => [k, Value.optional()])))
  .nullable()
  .transform((o) => o ?? {});

/**
 * The file's settings as environment variables (TERN_AGENT_*), to be layered under the real environment;
 * {} when the default file is absent. An explicit file that is missing, or any file that does not parse, is an error.
 */
export async function settingsFileEnv(path: string | undefined, explicit: boolean): Promise<Record<string, string>> {
  if (!path) return {};
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if (!explicit && (err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new AgentError("USAGE", `cannot read the settings file ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  // Loaded here only: --help and --version never pay for the YAML parser.
  const { parse } = await import("yaml");
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new AgentError("INVALID_CONFIG", `${path} is not YAML: ${(err as Error).message}`);
  }
  const parsed = SettingsFile.safeParse(doc);
  if (!parsed.success) throw new AgentError("INVALID_CONFIG", `${path}: ${formatIssues(parsed.error.issues)}`);
  const env: Record<string, string> = {};
  for (const [flag, value] of Object.entries(parsed.data))
    if (value !== undefined) env[COMMON_OPTIONS[flag as keyof typeof COMMON_OPTIONS].env] = value;
  return env;
}
