/** A tunnel's samples as chart columns: one time axis, this device's side and the other side. */
export interface Sample {
  at: string;
  side: "a" | "b";
  loss: number;
  rtt: number;
  jitter: number;
}

export interface Columns {
  times: number[];
  loss: [(number | null)[], (number | null)[]];
  rtt: [(number | null)[], (number | null)[]];
  jitter: [(number | null)[], (number | null)[]];
}

/** `side` is the side of the device whose page this is (its values come first). */
export function toColumns(samples: Sample[], side: "a" | "b"): Columns {
  const times = [...new Set(samples.map((s) => Date.parse(s.at) / 1000))].sort((x, y) => x - y);
  const index = new Map(times.map((t, i) => [t, i]));
  const empty = () => times.map(() => null) as (number | null)[];
  const cols: Columns = { times, loss: [empty(), empty()], rtt: [empty(), empty()], jitter: [empty(), empty()] };
  for (const s of samples) {
    const i = index.get(Date.parse(s.at) / 1000)!;
    const k = s.side === side ? 0 : 1;
    cols.loss[k][i] = s.loss;
    cols.rtt[k][i] = s.rtt;
    cols.jitter[k][i] = s.jitter;
  }
  return cols;
}
