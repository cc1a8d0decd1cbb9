/**
 * The last N lines of the agent's log (`<stateDir>/logs/agent.log`, pino JSON
 * lines, rotated to agent.log.1 at start), filtered by level, for the
 * server's `log-read`. Reads the file backwards in blocks, so a 10 MiB log
 * costs only the blocks that hold the lines asked for; the answer is capped
 * at MAX_LOG_ANSWER_BYTES (then `truncated`, keeping the newest lines).
 */
import { open } from "node:fs/promises";
import { AGENT_LOG_LEVELS, type LogReadParams, type LogReadResult, MAX_LOG_ANSWER_BYTES } from "@tern/protocol";

const BLOCK_BYTES = 64 * 1024;
/** Bytes read per file at most (a rotated log is about 10 MiB). */
const MAX_SCAN_BYTES = 32 * 1024 * 1024;
/** A longer line is cut (and the answer marked truncated). */
const MAX_LINE_CHARS = 16 * 1024;

/** pino's numeric levels: trace 10 … fatal 60. */
const levelNumber = (name: (typeof AGENT_LOG_LEVELS)[number]) => (AGENT_LOG_LEVELS.indexOf(name) + 1) * 10;

/** Lines of `file` from the end backwards, newest first, until `take` says stop. */
async function readBackwards(file: string, take: (line: string) => boolean): Promise<void> {
  const handle = await open(file, "r").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return null;
    throw err;
  });
  if (!handle) return;
  try {
    const { size } = await handle.stat();
    let position = size;
    let carry = Buffer.alloc(0);
    const floor = Math.max(0, size - MAX_SCAN_BYTES);
    while (position > floor) {
      const length = Math.min(BLOCK_BYTES, position - floor);
      position -= length;
      const block = Buffer.alloc(length);
      await handle.read(block, 0, length, position);
      let buffer = Buffer.concat([block, carry]);
      let nl = buffer.lastIndexOf(0x0a);
      // Split at newlines from the end; the part before the first newline waits for the previous block.
      while (nl >= 0) {
        const line = buffer.subarray(nl + 1).toString("utf8");
        buffer = buffer.subarray(0, nl);
        if (line.trim() !== "" && !take(line)) return;
        nl = buffer.lastIndexOf(0x0a);
      }
      carry = Buffer.from(buffer);
    }
    const first = carry.toString("utf8");
    if (position === 0 && first.trim() !== "") take(first);
  } finally {
    await handle.close();
  }
}

export async function readLogTail(file: string | null, p: LogReadParams): Promise<LogReadResult> {
  if (!file) return { lines: [], truncated: false, file: null };
  const min = levelNumber(p.level);
  const newestFirst: string[] = [];
  let bytes = 0;
  let truncated = false;
  const take = (raw: string): boolean => {
    let level = 0;
    try {
      level = Number((JSON.parse(raw) as { level?: unknown }).level) || 0;
    } catch {
      // not a pino line (e.g. a crash's stack trace): kept only when every level is asked for
    }
    if (level < min && !(level === 0 && p.level === "trace")) return true;
    let line = raw;
    if (line.length > MAX_LINE_CHARS) {
      line = line.slice(0, MAX_LINE_CHARS);
      truncated = true;
    }
    const size = Buffer.byteLength(line) + 3;
    if (bytes + size > MAX_LOG_ANSWER_BYTES) {
      truncated = true;
      return false;
    }
    bytes += size;
    newestFirst.push(line);
    return newestFirst.length < p.lines;
  };
  let more = true;
  await readBackwards(file, (line) => (more = take(line)));
  if (more && !truncated) await readBackwards(`${file}.1`, take);
  return { lines: newestFirst.reverse(), truncated, file };
}
