/**
 * What the kernel says about the WANs under the policy's links, on top of the
 * probes: a link whose WAN lost carrier or its address is not eligible at
 * once (the probes would need a second or more to notice). When the WAN comes
 * back the link stays out until a probe answer arrives after its return, so a
 * carrier that bounces does not drag traffic back and forth; the rule's
 * hold-down then applies as for any recovered link.
 */
import type { WanState } from "../../kernel-events/types.ts";
import type { LinkQuality } from "../../probes/types.ts";

export class KernelGate {
  /** WANs the kernel reports unusable, with why. */
  private readonly down = new Map<string, string>();
  /** WANs usable again since this time (ms, the policy's clock), waiting for a probe answer. */
  private readonly backAt = new Map<string, number>();

  /** Records a WAN reading at `now`. */
  update(s: WanState, now: number): void {
    const why = !s.carrier ? "carrier lost (kernel)" : s.address === null ? "no address (kernel)" : null;
    if (why) {
      this.down.set(s.ifname, why);
      this.backAt.delete(s.ifname);
    } else if (this.down.delete(s.ifname)) this.backAt.set(s.ifname, now);
  }

  /**
   * Why a link over WAN `wan` may not carry traffic now (null: the kernel has
   * nothing against it). `q` is the link's measurement, to see a probe answer
   * after the WAN's return; an unmeasured link is let back at once.
   */
  blocked(wan: string | null, q: LinkQuality | null, now: number): string | null {
    if (wan === null) return null;
    const down = this.down.get(wan);
    if (down) return down;
    const back = this.backAt.get(wan);
    if (back === undefined) return null;
    if (!q || q.samples === 0 || (q.sinceLastReplyMs !== null && now - q.sinceLastReplyMs >= back)) {
      this.backAt.delete(wan);
      return null;
    }
    return "back (kernel), waiting for a probe answer";
  }

  /** Forgets WANs no longer configured. */
  retain(wans: ReadonlySet<string>): void {
    for (const k of [...this.down.keys(), ...this.backAt.keys()])
      if (!wans.has(k)) {
        this.down.delete(k);
        this.backAt.delete(k);
      }
  }
}
