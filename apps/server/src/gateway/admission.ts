/**
 * When a device refused at admission (more than TERN_WS_ADMISSION_MAX links
 * being admitted: a fleet reconnecting at once) should come back. Each refusal
 * gets the next free turn at the rate links have been leaving admission
 * lately (welcomed, refused later or gone), so a fleet of 10,000 told to come
 * back is spread over the time the server needs to admit it, and each device
 * is refused about once. A random 1–5 s instead sent every waiting device back
 * every few seconds: tens of thousands of refused upgrades a minute, whose
 * accepts, parses and answers took the CPU the admissions needed.
 */

/** Turns handed out before any rate was measured, per second. */
export const INITIAL_ADMISSIONS_PER_S = 200;
/** The rate is never taken as lower than this (a stalled second does not push turns minutes away). */
const MIN_ADMISSIONS_PER_S = 50;
/** The longest wait handed out, seconds (an agent caps what it waits at its own longest back-off). */
export const MAX_RETRY_AFTER_S = 60;
/** A measuring window longer than this (no refusal for a while) says nothing of the rate. */
const MAX_WINDOW_MS = 3000;

export class AdmissionPacer {
  private perSecond = INITIAL_ADMISSIONS_PER_S;
  private windowStart: number;
  private releasedInWindow = 0;
  /** A refusal happened in the window: admission was full, so its releases measure the rate. */
  private refusedInWindow = false;
  /** When the last turn handed out begins (epoch ms). */
  private lastTurn = 0;

  constructor(private readonly now: () => number = Date.now) {
    this.windowStart = now();
  }

  /** A link left admission. */
  released(): void {
    this.releasedInWindow++;
  }

  /** The admissions per second the turns are spaced by. */
  get rate(): number {
    return this.perSecond;
  }

  /** Whole seconds a refused link should wait (Retry-After): the next free turn, at least 1 s, at most MAX_RETRY_AFTER_S. */
  retryAfterS(): number {
    const now = this.now();
    this.measure(now);
    this.refusedInWindow = true;
    this.lastTurn = Math.max(this.lastTurn, now) + 1000 / this.perSecond;
    return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.round((this.lastTurn - now) / 1000)));
  }

  /** Ends a window of at least a second: its releases, if admission was full, move the rate halfway to them. */
  private measure(now: number): void {
    const elapsed = now - this.windowStart;
    if (elapsed < 1000) return;
    if (this.refusedInWindow && elapsed <= MAX_WINDOW_MS) {
      const measured = (this.releasedInWindow * 1000) / elapsed;
      this.perSecond = Math.max(MIN_ADMISSIONS_PER_S, (this.perSecond + measured) / 2);
    }
    this.windowStart = now;
    this.releasedInWindow = 0;
    this.refusedInWindow = false;
  }
}
