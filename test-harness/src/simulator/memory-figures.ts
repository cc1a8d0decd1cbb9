/**
 * Memory per simulated device, never negative. The warm-up reading (after the
 * first device and a collection) can be higher than a later one: V8 returns
 * pages of the module-loading and registration garbage after it, so "now −
 * warm" went below zero (issue 14). The baseline is therefore the lowest
 * reading seen so far (a floor that only goes down), and the growth over it
 * is spread over the devices added.
 */
export interface MemoryReading {
  rssBytes: number;
  heapUsedBytes: number;
}

export class MemoryFloor {
  private floor: MemoryReading | null = null;

  /** Lowers the floor to `reading` where it is lower; returns the floor. */
  see(reading: MemoryReading): MemoryReading {
    this.floor = this.floor
      ? {
          rssBytes: Math.min(this.floor.rssBytes, reading.rssBytes),
          heapUsedBytes: Math.min(this.floor.heapUsedBytes, reading.heapUsedBytes),
        }
      : { ...reading };
    return this.floor;
  }

  /** Bytes per added device over the floor (the reading lowers the floor first), null without added devices. */
  perDevice(reading: MemoryReading, added: number): { rssBytes: number | null; heapUsedBytes: number | null } {
    const floor = this.see(reading);
    if (added <= 0) return { rssBytes: null, heapUsedBytes: null };
    return {
      rssBytes: Math.round((reading.rssBytes - floor.rssBytes) / added),
      heapUsedBytes: Math.round((reading.heapUsedBytes - floor.heapUsedBytes) / added),
    };
  }
}
