/**
 * Group commit: callers submit one item each and await its own outcome, while
 * the items that arrive during a flush go to the database together in the
 * next one (one transaction of a few statements instead of one per item).
 * An idle queue flushes the first item at once (or after `windowMs`, a
 * short coalescing window for items that tend to arrive together), so a lone
 * caller waits no longer than before; under load the batches grow by
 * themselves.
 *
 * A failed batch of several items is run again item by item, so one item
 * that cannot be written (or a deadlock with another writer) fails only its
 * own caller.
 */
export class GroupCommit<In, Out> {
  private pending: { input: In; resolve: (out: Out) => void; reject: (err: unknown) => void }[] = [];
  private flushing = false;

  /** `run` gets the batch and returns one outcome per item, in order. */
  constructor(
    private readonly run: (batch: In[]) => Promise<Out[]>,
    private readonly maxBatch = 500,
    private readonly windowMs = 0,
  ) {}

  submit(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.flushing) return;
      if (this.windowMs <= 0) void this.flush();
      else {
        this.flushing = true;
        setTimeout(() => void this.flush(), this.windowMs);
      }
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, this.maxBatch);
        try {
          const outs = await this.run(batch.map((b) => b.input));
          for (const [i, b] of batch.entries()) b.resolve(outs[i]!);
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          else
            for (const b of batch)
              await this.run([b.input]).then(
                ([out]) => b.resolve(out!),
                (e) => b.reject(e),
              );
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
