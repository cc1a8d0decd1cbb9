/**
 * `tern-agent dump [--dest DIR]`: one .tar.gz for troubleshooting (like the
 * reference's fwdump) with the agent's logs, status, applied config, rendered
 * daemon configs, each driver's daemon state and a few system facts. Secrets
 * are redacted and private (0600) files left out unless --include-secrets.
 * Default destination: <state-dir>/dumps (/var/lib/tern-agent/dumps), file
 * tern-agent-dump-<host>-<YYYYMMDDTHHMMSSZ>.tar.gz (dump-path.ts).
 */
import type { Dirent } from "node:fs";
import { chmod, copyFile, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, join, relative } from "node:path";
import { emptyDeviceConfig } from "@tern/protocol";
import type { DaemonMode, Driver } from "../drivers/driver.ts";
import { describeError } from "../errors.ts";
import { silentLogger } from "../log.ts";
import type { AgentPaths } from "../paths.ts";
import { StateStore } from "../reconcile/store.ts";
import type { Runner } from "../runner.ts";
import { AGENT_VERSION } from "../version.ts";
import { type CliDeps, hostnameOf, pathsOf, redact } from "./deps.ts";
import { dumpBaseName, freeDumpName } from "./dump-path.ts";

const MAX_FILE_BYTES = 5 * 1024 * 1024;

/** System facts worth having whatever the drivers are; each may be missing on a router. */
const SYSTEM_COMMANDS: [string, string[]][] = [
  ["uname.txt", ["uname", "-a"]],
  ["processes.txt", ["ps", "-eo", "pid,ppid,stat,etime,rss,args"]],
  ["sockets.txt", ["ss", "-tunap"]],
  ["links.txt", ["ip", "-d", "-s", "link", "show"]],
  ["nft-ruleset.txt", ["nft", "list", "ruleset"]],
  ["sysctl-net.txt", ["sysctl", "net.ipv4.ip_forward", "net.ipv4.conf.all.rp_filter", "net.ipv4.conf.all.promote_secondaries"]],
  ["disk.txt", ["df", "-h"]],
];

export async function dump({ options, runner, drivers, io }: CliDeps): Promise<number> {
  const { archive } = await createDumpArchive({
    paths: pathsOf(options),
    mode: options.mode,
    host: hostnameOf(options),
    runner,
    drivers,
    dest: options.dest,
    includeSecrets: options.includeSecrets,
    recordedOptions: { ...options, token: options.token ? "<redacted>" : undefined },
  });
  io.out(`${archive}\n`);
  return 0;
}

export interface DumpInput {
  paths: AgentPaths;
  mode: DaemonMode;
  /** The host name in the archive's name (as reported to the server). */
  host: string;
  runner: Runner;
  drivers: Driver[];
  /** Where the archive goes; default `paths.dumps`. */
  dest?: string | undefined;
  includeSecrets: boolean;
  /** What to record as agent/options.json (secrets already taken out). */
  recordedOptions: unknown;
}

/**
 * Makes the archive and returns its path and file name: `tern-agent dump`
 * and the server's dump request (`dump-create`, control/requests.ts) share it.
 */
export async function createDumpArchive(input: DumpInput): Promise<{ archive: string; fileName: string }> {
  const { paths, runner, drivers, includeSecrets } = input;
  const options = { mode: input.mode, includeSecrets };
  const dest = input.dest ?? paths.dumps;
  await mkdir(dest, { recursive: true, mode: 0o700 });
  const started = new Date();
  const { name, archive } = await freeDumpName(dest, dumpBaseName(input.host, started));
  const staging = await mkdtemp(join(dest, ".staging-"));
  const root = join(staging, name);
  const notes: string[] = [];
  const put = async (rel: string, content: string) => {
    await mkdir(join(root, rel, ".."), { recursive: true });
    await writeFile(join(root, rel), content, { mode: 0o600 });
  };
  const capture = async (argv: string[]) => {
    const r = await runner
      .run(argv, { allowFailure: true, timeoutMs: 15_000 })
      .catch((err: unknown) => ({ exitCode: -1, stdout: "", stderr: describeError(err) }));
    return r.exitCode === 0 ? r.stdout : `$ ${argv.join(" ")}\nexit ${r.exitCode}\n${r.stdout}${r.stderr}`;
  };
  try {
    const applied = await new StateStore(paths, silentLogger).loadApplied();
    await put("agent/version.txt", `tern-agent ${AGENT_VERSION}\nnode ${process.version}\n`);
    await put("agent/options.json", `${JSON.stringify(input.recordedOptions, null, 2)}\n`);
    for (const [rel, file] of [
      ["agent/applied.json", paths.applied],
      ["agent/pending.json", paths.pending],
      ["agent/device.json", paths.device],
      ["agent/status.json", paths.status],
    ] as const) {
      const text = await readFile(file, "utf8").catch(() => null);
      if (text === null) notes.push(`${rel}: ${file} does not exist`);
      else await put(rel, `${JSON.stringify(redact(safeJson(text)), null, 2)}\n`);
    }
    await copyTree(paths.logDir, join(root, "logs"), true, notes);
    if (options.mode === "system")
      await put("logs/journal.txt", await capture(["journalctl", "-u", "tern-agent", "-n", "5000", "--no-pager"]));
    // Driver records under the state dir (e.g. links/owned.json), but not what is handled above.
    for (const entry of await readdir(paths.stateDir, { withFileTypes: true }).catch(() => []))
      if (entry.isDirectory() && !["logs", "dumps", "run"].includes(entry.name) && !entry.name.startsWith("."))
        await copyTree(join(paths.stateDir, entry.name), join(root, "state", entry.name), options.includeSecrets, notes);
    // Rendered daemon configs, pid and lease files.
    await copyTree(paths.runDir, join(root, "run"), options.includeSecrets, notes);

    const ctx = { runner, mode: options.mode, stateDir: paths.stateDir, runDir: paths.runDir, log: silentLogger, notify() {} };
    const config = applied?.config ?? emptyDeviceConfig("none");
    for (const d of drivers) {
      if (!d.dump) continue;
      try {
        for (const item of await d.dump(config, ctx)) await put(join("drivers", d.name, basename(item.name)), item.content);
      } catch (err) {
        notes.push(`drivers/${d.name}: dump failed: ${describeError(err)}`);
      }
    }
    for (const [file, argv] of SYSTEM_COMMANDS) await put(join("system", file), await capture(argv));
    await put(
      "README.txt",
      [
        `tern-agent dump of ${input.host} at ${started.toISOString()} (agent ${AGENT_VERSION}, ${options.mode} mode)`,
        `state dir ${paths.stateDir}, run dir ${paths.runDir}`,
        options.includeSecrets ? "private files INCLUDED (--include-secrets)" : "secrets redacted; private (0600) files left out",
        "",
        ...notes,
        "",
      ].join("\n"),
    );
    await runner.run(["tar", "-czf", archive, "-C", staging, name], { timeoutMs: 120_000 });
    await chmod(archive, 0o600);
    return { archive, fileName: `${name}.tar.gz` };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { unparsable: text.slice(0, 10_000) };
  }
}

/** Copies regular files (size-capped); private files only with `includePrivate`, else a note. Sockets and links are skipped. */
async function copyTree(from: string, to: string, includePrivate: boolean, notes: string[]): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true, recursive: true }).catch(() => null);
  if (entries === null) {
    notes.push(`${from}: not present`);
    return;
  }
  await copyListed(entries, from, to, includePrivate, notes);
}

/**
 * copyTree's copy of the files `readdir` listed. The agent and its daemons keep writing while a dump is made (a
 * status file replaced by rename, a lease file rotated): a file gone or unreadable by the time it is copied is a
 * note in README.txt, and the dump goes on. (It made the whole dump fail, exit 1.)
 */
export async function copyListed(
  entries: readonly Dirent[],
  from: string,
  to: string,
  includePrivate: boolean,
  notes: string[],
): Promise<void> {
  for (const e of entries) {
    const src = join(e.parentPath, e.name);
    if (!e.isFile() || src.includes(`${"/"}.staging-`)) continue;
    const rel = relative(from, src);
    if (/\.damaged-\d+$/.test(rel)) {
      notes.push(`${src}: damaged config set aside, not copied`);
      continue;
    }
    try {
      const st = await lstat(src);
      if ((st.mode & 0o077) === 0 && !includePrivate) {
        notes.push(`${src}: private file (mode ${(st.mode & 0o777).toString(8)}) left out`);
        continue;
      }
      if (st.size > MAX_FILE_BYTES) {
        notes.push(`${src}: ${st.size} bytes, left out`);
        continue;
      }
      await mkdir(join(to, rel, ".."), { recursive: true });
      await copyFile(src, join(to, rel));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      notes.push(
        code === "ENOENT" ? `${src}: gone while the dump was made, not copied` : `${src}: not copied: ${describeError(err)}`,
      );
    }
  }
}
