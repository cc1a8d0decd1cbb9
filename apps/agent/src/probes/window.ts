/**
 * The measurement window of one probed target: the last `size` finalised
 * probes (answered in time, or lost), kept in sequence order.
 *
 * - loss: lost / finalised probes in the window, in percent.
 * - rttMs: mean RTT of the answered probes in the window (what `TunnelReport.rtt`
 *   carries, so loss, RTT and jitter describe the same probes).
 * - srttMs: smoothed RTT, `srtt += (rtt − srtt) / 8` over every answer
 *   (RFC 6298's alpha), for a steadier figure on the troubleshooting page.
 * - jitterMs: RFC 3550 interarrival jitter (§6.4.1), J += (|D(i−1,i)| − J)/16,
 *   where D is the difference of the RTTs of two consecutive answered probes
 *   (the sender's clock is both ends of a round trip, so the clock offsets of
 *   the RFC's formula cancel). Updated as answers are recorded, in sequence order.
 * - windowMs: the time the window covers (first to last recorded probe, plus
 *   one interval), so a reader knows what the loss figure is "over".
 * - totals: lifetime counts of finalised probes (sent = answered + lost), so
 *   the server can recompute loss over any window from differences.
 * A probe still waiting for its answer is not counted yet; an answer that
 * comes after the time-out has already been counted lost and is ignored.
 */
export interface WindowStats {
  lossPercent: number;
  rttMs: number;
  srttMs: number;
  jitterMs: number;
  /** Finalised probes in the window. */
  samples: number;
  /** Time the window covers, ms (0 before the first probe). */
  windowMs: number;
}

interface Slot {
  seq: number;
  rttMs: number | null;
  /** performance.now() when the result was recorded. */
  at: number;
}

/** RFC 3550's gain of the jitter estimator. */
const JITTER_GAIN = 1 / 16;

export class QualityWindow {
  private slots: Slot[] = [];
  private srtt: number | null = null;
  private jitter = 0;
  /** RTT of the newest answered probe (by sequence) the jitter estimator has seen. */
  private lastAnswer: { seq: number; rttMs: number } | null = null;
  /** Totals since start: the raw counts the status report carries. */
  readonly totals = { answered: 0, lost: 0 };

  /** `intervalMs` is the probe period, added once to the window's span. */
  constructor(
    private size: number,
    private intervalMs = 0,
    private readonly now: () => number = () => performance.now(),
  ) {}

  setInterval(intervalMs: number): void {
    this.intervalMs = intervalMs;
  }

  resize(size: number): void {
    this.size = size;
    this.trim();
  }

  /** Lowest sequence the window holds (see `startAt`). */
  private floor = Number.NEGATIVE_INFINITY;

  /**
   * Starts the window at probe `seq`: earlier probes leave it and later
   * results for them are not counted in it (the lifetime totals still are).
   * The prober calls it at a target's first answer ever: probes sent before
   * the path existed (a tunnel being set up) are not loss of the path.
   */
  startAt(seq: number): void {
    this.floor = seq;
    this.slots = this.slots.filter((s) => s.seq >= seq);
  }

  /** Records probe `seq` as answered after `rttMs`, or lost when `rttMs` is null. */
  record(seq: number, rttMs: number | null): void {
    if (this.slots.some((s) => s.seq === seq)) return;
    if (seq < this.floor) {
      if (rttMs === null) this.totals.lost++;
      else this.totals.answered++;
      return;
    }
    const slot = { seq, rttMs, at: this.now() };
    let i = this.slots.length;
    while (i > 0 && this.slots[i - 1]!.seq > seq) i--;
    this.slots.splice(i, 0, slot);
    if (rttMs === null) this.totals.lost++;
    else {
      this.totals.answered++;
      this.srtt = this.srtt === null ? rttMs : this.srtt + (rttMs - this.srtt) / 8;
      // An answer older than the newest one seen (reordered) does not step the estimator back.
      if (this.lastAnswer === null || seq > this.lastAnswer.seq) {
        if (this.lastAnswer !== null) this.jitter += (Math.abs(rttMs - this.lastAnswer.rttMs) - this.jitter) * JITTER_GAIN;
        this.lastAnswer = { seq, rttMs };
      }
    }
    this.trim();
  }

  private trim(): void {
    if (this.slots.length > this.size) this.slots = this.slots.slice(this.slots.length - this.size);
  }

  /** Figures over the window, or over only its newest `last` probes (srtt and jitter are running estimates either way). */
  stats(last?: number): WindowStats {
    const slots = last === undefined || last >= this.slots.length ? this.slots : this.slots.slice(this.slots.length - last);
    const samples = slots.length;
    const rtts = slots.flatMap((s) => (s.rttMs === null ? [] : [s.rttMs]));
    const lost = samples - rtts.length;
    const ats = slots.map((s) => s.at);
    return {
      lossPercent: samples === 0 ? 0 : (lost / samples) * 100,
      rttMs: rtts.length === 0 ? 0 : rtts.reduce((a, b) => a + b, 0) / rtts.length,
      srttMs: this.srtt ?? 0,
      jitterMs: this.jitter,
      samples,
      windowMs: samples === 0 ? 0 : Math.round(Math.max(...ats) - Math.min(...ats) + this.intervalMs),
    };
  }
}
