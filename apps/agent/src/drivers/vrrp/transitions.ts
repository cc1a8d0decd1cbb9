/**
 * VRRP transitions as the notify script records them, and a watcher that
 * reports new ones at once (inotify on the directory, so it works before the
 * file exists and across namespaces).
 */
import { type FSWatcher, watch } from "node:fs";
import { open, stat } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { ConfigVrrp, VrrpRouterState } from "@tern/protocol";
import { INSTANCE_PREFIX } from "./render.ts";

export interface Transition {
  at: Date;
  groupId: string;
  state: VrrpRouterState;
  priority: number | null;
}

function toState(text: string): VrrpRouterState {
  if (text === "MASTER" || text === "BACKUP" || text === "FAULT") return text;
  if (text === "STOP" || text === "DELETED") return "INIT";
  return "unknown";
}

/** Parses notify-script lines; ignores lines of other instances and torn lines. */
export function parseTransitions(text: string): Transition[] {
  const out: Transition[] = [];
  for (const line of text.split("\n")) {
    const [ts, name, state, prio] = line.trim().split(/\s+/);
    if (!ts || !name?.startsWith(INSTANCE_PREFIX) || !state) continue;
    const seconds = Number(ts);
    if (!Number.isFinite(seconds)) continue;
    out.push({
      at: new Date(seconds * 1000),
      groupId: name.slice(INSTANCE_PREFIX.length),
      state: toState(state),
      priority: prio ? Number(prio) : null,
    });
  }
  return out;
}

export interface GroupState {
  groupId: string;
  state: VrrpRouterState;
  since: string | null;
}

/** The latest state of each configured group; `running` false means keepalived is not there to hold any. */
export function groupStates(groups: ConfigVrrp[], transitions: Transition[], running: boolean): GroupState[] {
  return groups.map((g) => {
    if (!running) return { groupId: g.groupId, state: "unknown", since: null };
    const last = transitions.filter((t) => t.groupId === g.groupId).at(-1);
    return last
      ? { groupId: g.groupId, state: last.state, since: last.at.toISOString() }
      : { groupId: g.groupId, state: "INIT", since: null };
  });
}

/** Follows the transitions file and hands every new transition to `onTransition`. */
export class TransitionWatcher {
  private watcher: FSWatcher | null = null;
  private offset = 0;
  private reading: Promise<void> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly onTransition: (t: Transition) => void,
  ) {}

  get running(): boolean {
    return this.watcher !== null;
  }

  /** Starts watching; transitions already in the file are skipped. */
  async start(): Promise<void> {
    if (this.watcher) return;
    this.offset = (await stat(this.path).catch(() => null))?.size ?? 0;
    const name = basename(this.path);
    this.watcher = watch(dirname(this.path), (_event, file) => {
      if (file === null || file === name) this.reading = this.reading.then(() => this.readNew());
    });
    this.watcher.unref();
  }

  /** The file was emptied (a new keepalived run). */
  reset(): void {
    this.offset = 0;
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  private async readNew(): Promise<void> {
    const handle = await open(this.path, "r").catch(() => null);
    if (!handle) return;
    try {
      const { size } = await handle.stat();
      if (size < this.offset) this.offset = 0;
      if (size === this.offset) return;
      const buf = Buffer.alloc(size - this.offset);
      await handle.read(buf, 0, buf.length, this.offset);
      const text = buf.toString("utf8");
      // Only whole lines: a line still being written is read next time.
      const end = text.lastIndexOf("\n") + 1;
      this.offset += Buffer.byteLength(text.slice(0, end));
      for (const t of parseTransitions(text.slice(0, end))) this.onTransition(t);
    } finally {
      await handle.close();
    }
  }
}
