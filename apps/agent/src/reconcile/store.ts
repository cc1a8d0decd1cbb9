/**
 * The reconcile loop's persistent state: the last good config with its hash
 * (`applied.json`, 0600 because configs carry PSKs and BGP passwords) and a
 * marker present while an apply runs (`pending.json`), so a restart knows the
 * previous apply was cut short. Both written atomically.
 */
import { readFile, rename, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { configHash, DeviceConfig } from "@tern/protocol";
import * as z from "zod";
import type { Logger } from "../drivers/driver.ts";
import { writeFileAtomic } from "../fs.ts";
import type { AgentPaths } from "../paths.ts";

export const AppliedRecord = z.object({ hash: z.string(), appliedAt: z.string(), config: DeviceConfig });
export type AppliedRecord = z.infer<typeof AppliedRecord>;

export const PendingRecord = z.object({ hash: z.string(), startedAt: z.string(), source: z.string(), pid: z.number().int() });
export type PendingRecord = z.infer<typeof PendingRecord>;

export class StateStore {
  constructor(
    private readonly paths: Pick<AgentPaths, "applied" | "pending">,
    private readonly log: Logger,
  ) {}

  /** The last good config, or null. A damaged file is set aside (never silently trusted) and reported. */
  async loadApplied(): Promise<AppliedRecord | null> {
    const text = await readFile(this.paths.applied, "utf8").catch(() => null);
    if (text === null) return null;
    let problem: string;
    try {
      const parsed = AppliedRecord.safeParse(JSON.parse(text));
      if (parsed.success && configHash(parsed.data.config) === parsed.data.hash) return parsed.data;
      problem = parsed.success ? "its hash does not match its config" : parsed.error.message;
    } catch (err) {
      problem = (err as Error).message;
    }
    const aside = `${this.paths.applied}.damaged-${Date.now()}`;
    await rename(this.paths.applied, aside).catch(() => {});
    this.log.error("last good config is damaged; set aside, starting without one", { file: aside, problem });
    return null;
  }

  async saveApplied(config: DeviceConfig, hash: string): Promise<AppliedRecord> {
    const record: AppliedRecord = { hash, appliedAt: new Date().toISOString(), config };
    await writeFileAtomic(this.paths.applied, `${JSON.stringify(record, null, 2)}\n`, 0o600);
    return record;
  }

  async loadPending(): Promise<PendingRecord | null> {
    const text = await readFile(this.paths.pending, "utf8").catch(() => null);
    if (text === null) return null;
    try {
      return PendingRecord.parse(JSON.parse(text));
    } catch {
      return { hash: "unknown", startedAt: "unknown", source: "unreadable pending.json", pid: 0 };
    }
  }

  async markPending(hash: string, source: string): Promise<void> {
    const record: PendingRecord = { hash, startedAt: new Date().toISOString(), source, pid: process.pid };
    await writeFileAtomic(this.paths.pending, `${JSON.stringify(record)}\n`, 0o644);
  }

  async clearPending(): Promise<void> {
    await unlink(this.paths.pending).catch(() => {});
  }

  /** Forgets the last good config (a `reset`): the next start restores nothing. */
  async clearApplied(): Promise<void> {
    await unlink(this.paths.applied).catch(() => {});
  }

  /** Beside the last good config: present while the data plane is stopped (a `stop` action), so a restart keeps it stopped. */
  private get stoppedMarker(): string {
    return join(dirname(this.paths.applied), "data-plane-stopped");
  }

  async loadStopped(): Promise<boolean> {
    return (await readFile(this.stoppedMarker, "utf8").catch(() => null)) !== null;
  }

  async saveStopped(stopped: boolean): Promise<void> {
    if (stopped) await writeFileAtomic(this.stoppedMarker, `${new Date().toISOString()}\n`, 0o644);
    else await unlink(this.stoppedMarker).catch(() => {});
  }
}
