/** State shared by the section compilers of one run: the input, lookups and the warning list. */
import type { DeviceInterface } from "@tern/protocol";
import type { CompileInput, CompileWarning } from "./input.ts";

export interface CompileContext {
  input: CompileInput;
  /** Assigned interfaces of the device, by devId. */
  assigned: ReadonlyMap<string, DeviceInterface>;
  /** Path label ids that exist in the organization. */
  pathLabelIds: ReadonlySet<string>;
  warn(warning: CompileWarning): void;
}

export function createContext(input: CompileInput, warnings: CompileWarning[]): CompileContext {
  const assigned = new Map<string, DeviceInterface>();
  for (const iface of input.device.interfaces) if (iface.isAssigned) assigned.set(iface.devId, iface);
  return {
    input,
    assigned,
    pathLabelIds: new Set(input.pathLabels.map((l) => l.id)),
    warn: (w) => warnings.push(w),
  };
}
