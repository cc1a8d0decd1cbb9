/**
 * The record of one lab: `<stateRoot>/<name>/state.json`, rewritten atomically
 * after every change and *before* each namespace is created, so `down` can
 * remove everything even when the process that built the lab was killed.
 * Everything else the lab writes (configs, logs, pid files) lives in the same
 * directory, which `down` removes last.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { LabError, LabErrorCode } from "../errors.ts";
import { Impairment } from "../topology/schema.ts";
import { isAlive, procStartTime } from "./supervisor.ts";

export const STATE_VERSION = 1;

const ProcessRecordSchema = z.object({
  key: z.string(),
  role: z.string(),
  argv: z.array(z.string()),
  netns: z.string().nullable(),
  log: z.string(),
  pid: z.number().int(),
  startTime: z.string(),
});

export const LabState = z.object({
  version: z.literal(STATE_VERSION),
  name: z.string(),
  /** NetnsScope label and id: namespaces are `tn-<label>-<id>-<node>`. */
  label: z.string(),
  id: z.string(),
  status: z.enum(["building", "up", "failed"]),
  topologyFile: z.string(),
  topologyHash: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** node name → namespace name; written before the namespace is created. */
  namespaces: z.record(z.string(), z.string()),
  processes: z.array(ProcessRecordSchema),
  /** The live impairment of each attachment (`<cloud>:<node>`), as last applied. */
  impairments: z.record(z.string(), Impairment),
  impairment: z.object({ backend: z.enum(["netem", "emulated"]), reason: z.string() }).nullable(),
  control: z
    .object({
      enabled: z.boolean(),
      /** Server port on 127.0.0.1, kept so a converging `up` reuses it. */
      port: z.number().int(),
      apiUrl: z.string().nullable(),
      /** The admin the lab drives the API as (its password is in credentials.json, mode 0600). */
      adminEmail: z.string().nullable().default(null),
      /** Edge name → device id, once onboarded. */
      devices: z.record(z.string(), z.string()).default({}),
      /** What a later step needs to know (credentials file, per-edge URLs …). */
      notes: z.array(z.string()),
    })
    .nullable(),
});
export type LabState = z.infer<typeof LabState>;

export function labDir(stateRoot: string, name: string): string {
  return join(stateRoot, name);
}

/** Loads, keeps and atomically saves one lab's state. */
export class StateStore {
  readonly dir: string;
  readonly file: string;

  constructor(
    stateRoot: string,
    readonly name: string,
    public state: LabState,
  ) {
    this.dir = labDir(stateRoot, name);
    this.file = join(this.dir, "state.json");
  }

  static async load(stateRoot: string, name: string): Promise<StateStore | null> {
    const text = await readFile(join(labDir(stateRoot, name), "state.json"), "utf8").catch(() => null);
    if (text === null) return null;
    const parsed = LabState.safeParse(JSON.parse(text));
    if (!parsed.success) throw new LabError(LabErrorCode.LAB_NOT_FOUND, `unreadable lab state in ${labDir(stateRoot, name)}`);
    return new StateStore(stateRoot, name, parsed.data);
  }

  /** Applies `change` and writes the file (temp file, fsync, rename). */
  async update(change: (s: LabState) => void): Promise<void> {
    change(this.state);
    this.state.updatedAt = new Date().toISOString();
    await mkdir(this.dir, { recursive: true });
    const tmp = `${this.file}.${randomBytes(4).toString("hex")}.tmp`;
    const handle = await open(tmp, "w", 0o644);
    try {
      await handle.writeFile(`${JSON.stringify(this.state, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.file);
  }
}

/**
 * An exclusive lock on one lab (`lock` in its directory, holding the owner's
 * pid and start time). A lock whose owner is gone (kill -9) is taken over.
 */
export async function acquireLock(dir: string): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, "lock");
  const me = { pid: process.pid, startTime: await procStartTime(process.pid) };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(path, "wx", 0o644);
      await handle.writeFile(JSON.stringify(me));
      await handle.close();
      return async () => {
        await unlink(path).catch(() => {});
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = parseOwner(await readFile(path, "utf8").catch(() => ""));
      if (owner.pid && owner.startTime && (await isAlive({ pid: owner.pid, startTime: owner.startTime }))) {
        throw new LabError(LabErrorCode.LAB_BUSY, `another lab command (pid ${owner.pid}) is working on ${dir}`);
      }
      await rm(path, { force: true }); // stale: its owner died
    }
  }
  throw new LabError(LabErrorCode.LAB_BUSY, `cannot lock ${dir}`);
}

function parseOwner(text: string): { pid?: number; startTime?: string } {
  try {
    return JSON.parse(text) as { pid?: number; startTime?: string };
  } catch {
    return {}; // empty or half-written by an owner that died
  }
}
