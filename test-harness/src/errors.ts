/** One error type for the lab, with a machine code the CLI prints and tests assert. */

export const LabErrorCode = {
  /** The topology file has YAML, schema or address-plan errors (each with its line). */
  TOPOLOGY_INVALID: "TOPOLOGY_INVALID",
  TOPOLOGY_NOT_FOUND: "TOPOLOGY_NOT_FOUND",
  /** No lab of that name has state on this machine. */
  LAB_NOT_FOUND: "LAB_NOT_FOUND",
  /** Several labs are up; the command needs to be told which one. */
  LAB_AMBIGUOUS: "LAB_AMBIGUOUS",
  /** A lab of that name is up with a different topology. */
  LAB_EXISTS_DIFFERENT: "LAB_EXISTS_DIFFERENT",
  /** Another lab command is running on the same lab. */
  LAB_BUSY: "LAB_BUSY",
  /** A tool, package, kernel feature or permission the lab needs is missing. */
  PREREQUISITE_MISSING: "PREREQUISITE_MISSING",
  NATIVE_BUILD_FAILED: "NATIVE_BUILD_FAILED",
  LINK_NOT_FOUND: "LINK_NOT_FOUND",
  NODE_NOT_FOUND: "NODE_NOT_FOUND",
  IMPAIRMENT_INVALID: "IMPAIRMENT_INVALID",
  /** A process the lab started did not become ready in time. */
  NOT_READY: "NOT_READY",
  USAGE: "USAGE",
} as const;
export type LabErrorCode = (typeof LabErrorCode)[keyof typeof LabErrorCode];

export class LabError extends Error {
  constructor(
    readonly code: LabErrorCode,
    message: string,
    readonly details: string[] = [],
  ) {
    super(details.length > 0 ? `${message}\n${details.map((d) => `  ${d}`).join("\n")}` : message);
    this.name = "LabError";
  }
}
