/**
 * What a hand-written script would do to configure a router like the agent
 * does: the files and commands of `tern-agent plan --json --show-secrets`
 * (the agent's own rendering, from scratch), run in order by one `sh` in the
 * router's namespace with no agent around. Where a command needs a daemon
 * that is still starting (swanctl before charon's socket exists, a route over
 * ipsec0 before charon made it) the script retries it every 25 ms, as such a
 * script would have to; it waits for nothing else.
 */
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { run } from "@tern/netlab";
import type { DeviceConfig } from "@tern/protocol";
import { AGENT_BIN, agentArgs } from "./agent.ts";
import type { LabRouter } from "./lab.ts";

export interface PlannedDriver {
  driver: string;
  files: { path: string; mode: number; content: string }[];
  commands: string[][];
}

export function runDirOf(r: LabRouter): string {
  return join(r.stateDir, "run");
}

/** The agent's rendering of `config` for this router (pure: changes nothing). */
export async function planOf(r: LabRouter, config: DeviceConfig): Promise<PlannedDriver[]> {
  await mkdir(r.stateDir, { recursive: true, mode: 0o755 });
  const file = join(r.stateDir, "plan-input.json");
  await writeFile(file, JSON.stringify(config));
  const res = await run([AGENT_BIN, "plan", file, "--json", "--show-secrets", ...agentArgs(r)], { timeoutMs: 60_000 });
  return (JSON.parse(res.stdout) as { drivers: PlannedDriver[] }).drivers;
}

/** Writes the plan's files where the agent would (`<run dir>/<driver>/<path>`). */
export async function writePlanFiles(r: LabRouter, plan: PlannedDriver[]): Promise<void> {
  for (const d of plan)
    for (const f of d.files) {
      const path = join(runDirOf(r), d.driver, f.path);
      await mkdir(dirname(path), { recursive: true, mode: 0o755 });
      await writeFile(path, f.content, { mode: f.mode });
      await chmod(path, f.mode);
    }
}

const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

/** A POSIX sh script running `commands` in order (retrying each until it succeeds, 10 s at most) that prints its own start and end in ns. */
export function shellScript(commands: string[][], env: Record<string, string> = {}): string {
  return [
    "set -u",
    ...Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}`),
    'r() { i=0; until "$@" >/dev/null 2>"$ERR"; do i=$((i+1)); if [ $i -ge 400 ]; then echo "failed: $*: $(cat "$ERR")" >&2; exit 1; fi; sleep 0.025; done; }',
    "t0=$(date +%s%N)",
    ...commands.map((c) => `r ${c.map(quote).join(" ")}`),
    "t1=$(date +%s%N)",
    'echo "$t0 $t1"',
  ].join("\n");
}

/** Runs a script from shellScript() in the router's namespace; returns its own elapsed time in ms. */
export async function runScript(r: LabRouter, script: string, name: string): Promise<number> {
  const path = join(r.stateDir, `${name}.sh`);
  await writeFile(path, script);
  const res = await run(["ip", "netns", "exec", r.ns.name, "env", `ERR=${path}.err`, "sh", path], {
    allowFailure: true,
    timeoutMs: 300_000,
  });
  if (res.exitCode !== 0) throw new Error(`raw script ${name} in ${r.ns.name} failed: ${res.stderr.trim()}`);
  const [t0, t1] = res.stdout.trim().split(/\s+/).slice(-2).map(BigInt) as [bigint, bigint];
  return Number(t1 - t0) / 1e6;
}

/** The environment the agent gives strongSwan (charon and swanctl read this strongswan.conf). */
export function rawEnv(r: LabRouter): Record<string, string> {
  return { STRONGSWAN_CONF: join(runDirOf(r), "ikev2", "strongswan.conf") };
}
