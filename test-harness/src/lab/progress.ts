/** Phase timing for `lab up` / `down`: each phase reports its duration and the running total. */

export interface PhaseEvent {
  phase: string;
  /** Duration of this phase, ms. */
  ms: number;
  /** Time since the timer started, ms. */
  totalMs: number;
  detail?: string;
}

export type ProgressSink = (event: PhaseEvent) => void;

export const silent: ProgressSink = () => {};

export class PhaseTimer {
  private readonly t0 = performance.now();
  readonly phases: PhaseEvent[] = [];

  constructor(private readonly sink: ProgressSink = silent) {}

  /** Runs one phase and reports it; `detail` may be computed from the result. */
  async phase<T>(name: string, fn: () => Promise<T>, detail?: (result: T) => string | undefined): Promise<T> {
    const start = performance.now();
    const result = await fn();
    const end = performance.now();
    const event = { phase: name, ms: end - start, totalMs: end - this.t0, detail: detail?.(result) };
    this.phases.push(event);
    this.sink(event);
    return result;
  }

  get totalMs(): number {
    return performance.now() - this.t0;
  }
}

/** One line per phase: `  namespaces (7)                0.041s  (total 0.041s)`. */
export function formatPhase(e: PhaseEvent): string {
  const label = e.detail ? `${e.phase} (${e.detail})` : e.phase;
  return `  ${label.padEnd(44)} ${(e.ms / 1000).toFixed(3)}s  (total ${(e.totalMs / 1000).toFixed(3)}s)`;
}
