/**
 * A section of the device config that cannot be rendered. Thrown by pure
 * render functions before anything on the system changes, with the protocol's
 * machine code and the dotted path of the offending field.
 */
export class ConfigError extends Error {
  readonly code = "VALIDATION_FAILED" as const;
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = "ConfigError";
  }
}
