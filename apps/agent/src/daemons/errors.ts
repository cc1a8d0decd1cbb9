/**
 * Errors the daemon drivers throw with a machine code. `INVALID_CONFIG` means
 * the section cannot be rendered (nothing on the system was changed);
 * `DAEMON_FAILED` means a daemon did not start, stop or reload as asked.
 */
export type DriverErrorCode = "INVALID_CONFIG" | "DAEMON_FAILED";

export class DriverError extends Error {
  constructor(
    readonly code: DriverErrorCode,
    message: string,
    /** Dotted path into the DeviceConfig for INVALID_CONFIG ("tunnels.0.esp.proposal"). */
    readonly path?: string,
  ) {
    super(path ? `${path}: ${message}` : message);
    this.name = "DriverError";
  }
}

/** Shorthand for an INVALID_CONFIG error at `path`. */
export function invalidConfig(path: string, message: string): DriverError {
  return new DriverError("INVALID_CONFIG", message, path);
}
