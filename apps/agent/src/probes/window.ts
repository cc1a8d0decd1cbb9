/**
 * The measurement window of one probed target: the last `size` finalised
 * probes (answered in time, or lost), kept in sequence order.
 *
 * - loss: lost / finalised probes in the window, in percent.
 * - rttMs: mean RTT of the answered probes in the window (what `TunnelReport.rtt`
 *   carries, so loss, RTT and jitter describe the same probes).
 * - srttMs: smoothed RTT, `srtt += (rtt − srtt) / 8` over every answer
 *   (RFC 6298's alpha), for a steadier figure on the troubleshooting page.
 * - jitterMs: mean absolute difference of consecutive RTTs of answered
 *   probes in the window (RFC 3550's |D(i−1,i)| without its 1/16 smoothing,
 *   so it follows the same window as loss).
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
}

interface Slot {
  seq: number;
  rttMs: number | null;
}

export class QualityWindow {
  private slots: Slot[] = [];
  private srtt: number | null = null;
  /** Totals since start, for metrics and tests. */
  readonly totals = { answered: 0, lost: 0 };

  constructor(private size: number) {}

  resize(size: number): void {
    this.size = size;
    this.trim();
  }

  /** Records probe `seq` as answered after `rttMs`, or lost when `rttMs` is null. */
  record(seq: number, rttMs: number | null): void {
    if (this.slots.some((s) => s.seq === seq)) return;
    const slot = { seq, rttMs };
    let i = this.slots.length;
    while (i > 0 && this.slots[i - 1]!.seq > seq) i--;
    this.slots.splice(i, 0, slot);
    if (rttMs === null) this.totals.lost++;
    else {
      this.totals.answered++;
      this.srtt = this.srtt === null ? rttMs : this.srtt + (rttMs - this.srtt) / 8;
    }
    this.trim();
  }

  private trim(): void {
    if (this.slots.length > this.size) this.slots = this.slots.slice(this.slots.length - this.size);
  }

  stats(): WindowStats {
    const samples = this.slots.length;
    const rtts = this.slots.flatMap((s) => (s.rttMs === null ? [] : [s.rttMs]));
    const lost = samples - rtts.length;
    let diff = 0;
    for (let i = 1; i < rtts.length; i++) diff += Math.abs(rtts[i]! - rtts[i - 1]!);
    return {
      lossPercent: samples === 0 ? 0 : (lost / samples) * 100,
      rttMs: rtts.length === 0 ? 0 : rtts.reduce((a, b) => a + b, 0) / rtts.length,
      srttMs: this.srtt ?? 0,
      jitterMs: rtts.length < 2 ? 0 : diff / (rtts.length - 1),
      samples,
    };
  }
}
