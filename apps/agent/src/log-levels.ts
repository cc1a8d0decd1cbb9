/** pino's level names, apart from log.ts so that parsing options (and `tern-agent --help`) does not load pino. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
