/**
 * Logging through pino: JSON lines to stderr and, for the daemon, to
 * `<stateDir>/logs/agent.log` (kept for `tern-agent dump`; rotated to
 * agent.log.1 at start when larger than LOG_ROTATE_BYTES). Drivers see only
 * the small `Logger` interface of the driver contract.
 */
import { mkdirSync, renameSync, statSync } from "node:fs";
import { dirname } from "node:path";
import pino from "pino";
import type { Logger } from "./drivers/driver.ts";
import { LOG_LEVELS, type LogLevel } from "./log-levels.ts";

export { LOG_LEVELS, type LogLevel };
export const LOG_ROTATE_BYTES = 10 * 1024 * 1024;

export interface AgentLogger extends Logger {
  child(bindings: Record<string, unknown>): AgentLogger;
  flush(): void;
}

function wrap(p: pino.Logger): AgentLogger {
  return {
    debug: (msg, fields) => p.debug(fields ?? {}, msg),
    info: (msg, fields) => p.info(fields ?? {}, msg),
    warn: (msg, fields) => p.warn(fields ?? {}, msg),
    error: (msg, fields) => p.error(fields ?? {}, msg),
    child: (bindings) => wrap(p.child(bindings)),
    flush: () => p.flush(),
  };
}

/**
 * A logger to stderr, plus `file` (appended, synchronously so a crash loses
 * nothing) when given. One-shot commands pass `stderrLevel: "warn"` so their
 * own output stays readable while the file keeps everything at `level`.
 */
export function createLogger(level: LogLevel, file?: string, options: { stderrLevel?: LogLevel } = {}): AgentLogger {
  const stderrLevel =
    options.stderrLevel && LOG_LEVELS.indexOf(options.stderrLevel) < LOG_LEVELS.indexOf(level) ? options.stderrLevel : level;
  const streams: pino.StreamEntry[] = [{ level: stderrLevel === "silent" ? "fatal" : stderrLevel, stream: pino.destination(2) }];
  if (file) {
    mkdirSync(dirname(file), { recursive: true });
    try {
      if (statSync(file).size > LOG_ROTATE_BYTES) renameSync(file, `${file}.1`);
    } catch {
      // no log yet
    }
    streams.push({
      level: level === "silent" ? "fatal" : level,
      stream: pino.destination({ dest: file, sync: true, mkdir: true }),
    });
  }
  return wrap(pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, pino.multistream(streams)));
}

/** A logger that drops everything (tests, pure commands). */
export const silentLogger: AgentLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
  flush() {},
};

/** A logger that keeps records in memory, for tests that assert on what was logged. */
export function memoryLogger(records: { level: string; msg: string; fields?: Record<string, unknown> }[] = []): AgentLogger & {
  records: typeof records;
} {
  const make = (bindings: Record<string, unknown>): AgentLogger => ({
    debug: (msg, fields) => records.push({ level: "debug", msg, fields: { ...bindings, ...fields } }),
    info: (msg, fields) => records.push({ level: "info", msg, fields: { ...bindings, ...fields } }),
    warn: (msg, fields) => records.push({ level: "warn", msg, fields: { ...bindings, ...fields } }),
    error: (msg, fields) => records.push({ level: "error", msg, fields: { ...bindings, ...fields } }),
    child: (more) => make({ ...bindings, ...more }),
    flush() {},
  });
  return Object.assign(make({}), { records });
}
