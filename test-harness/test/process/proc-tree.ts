/** The process tree under a pid, read from /proc (Linux): what a signal to the root must bring down. */
import { readdirSync, readFileSync } from "node:fs";

/** Parent pid of every live process, from /proc/<pid>/stat (the command name is in parentheses and may hold spaces). */
function parents(): Map<number, number> {
  const map = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // fields[0] is the state: a zombie has exited already, only its parent has not reaped it yet.
      if (fields[0] !== "Z") map.set(Number(entry), Number(fields[1]));
    } catch {
      // gone while we looked
    }
  }
  return map;
}

/** Every live descendant of `root` (not root itself). */
export function descendants(root: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const [pid, ppid] of parents()) byParent.set(ppid, [...(byParent.get(ppid) ?? []), pid]);
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of byParent.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The pids among `pids` that still run (zombies count as gone). */
export function stillRunning(pids: number[]): number[] {
  const live = parents();
  return pids.filter((p) => live.has(p));
}

export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "(gone)";
  }
}
