/** A driver for reconcile tests: records what it was asked to apply, can fail or stall on demand. */
import { configHash, type DeviceConfig } from "@tern/protocol";
import type { ApplyOutcome, Driver, DriverName } from "../../src/drivers/driver.ts";

export class TestDriver implements Driver {
  /** Hashes of the configs applied, in order. */
  readonly applied: string[] = [];
  /** Current "system state" of this driver: the hash it last applied successfully. */
  state: string | null = null;
  failWhen: (config: DeviceConfig) => string | null = () => null;
  /** Resolved by the test to let a stalled apply continue. */
  gate: Promise<void> | null = null;

  constructor(readonly name: DriverName) {}

  async apply(config: DeviceConfig): Promise<ApplyOutcome> {
    const hash = configHash(config);
    this.applied.push(hash);
    if (this.gate) await this.gate;
    const failure = this.failWhen(config);
    if (failure) throw new Error(failure);
    const changed = this.state !== hash;
    this.state = hash;
    return { changed };
  }

  plan(): { files: never[]; commands: string[][] } {
    return { files: [], commands: [[this.name, "apply"]] };
  }
}

/** A promise with its resolve function exposed. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
