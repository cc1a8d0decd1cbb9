/**
 * Reconnect delays: exponential with "equal jitter" (half fixed, half random),
 * so a fleet that lost its server does not come back in lock-step.
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor: number;
  /** Random in [0, 1). */
  random?: () => number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 60_000, factor: 2 };

export class Backoff {
  private attempt = 0;
  private readonly random: () => number;

  constructor(private readonly options: BackoffOptions = DEFAULT_BACKOFF) {
    this.random = options.random ?? Math.random;
  }

  /** The delay before the next attempt; each call doubles the ceiling up to maxMs. */
  next(): number {
    const ceiling = Math.min(this.options.maxMs, this.options.initialMs * this.options.factor ** this.attempt);
    this.attempt++;
    return Math.round(ceiling / 2 + this.random() * (ceiling / 2));
  }

  /** The longest delay (with jitter), for errors a quick retry cannot fix (unauthenticated, not approved). */
  longest(): number {
    this.attempt++;
    return Math.round(this.options.maxMs / 2 + this.random() * (this.options.maxMs / 2));
  }

  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}
