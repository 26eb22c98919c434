/**
 * Windowed means over the tail of a series, as in seed 000's table: the mean RTT of
 * "Records 500-401", "Records 400-301", … "Last 100 records", and how the final window moved
 * against the one before it ("Down by 166.29 µs"). Pure.
 */

export interface WindowOptions {
  /** How many of the most recent samples to cover (a multiple of `window`). Default 500. */
  last?: number;
  /** Samples per window. Default 100. */
  window?: number;
  /** Index the tail ends at (exclusive), e.g. the first sample after a break. Default: all. */
  end?: number;
}

export interface WindowRow {
  /** "Records 500-401" … "Last 100 records". */
  label: string;
  /** Records counted back from the end (1 = the most recent): this window is from…to. */
  from: number;
  to: number;
  /** Index range in `samples`: [start, stop). */
  start: number;
  stop: number;
  count: number;
  mean: number;
}

export interface WindowedMeans {
  /** Oldest window first; only whole windows (fewer when the series is shorter than `last`). */
  rows: WindowRow[];
  /** Mean of the final window minus the mean of the one before; undefined with < 2 windows. */
  finalChange: number | undefined;
}

function wholeNumber(name: string, v: number, min: number): number {
  if (!Number.isInteger(v) || v < min) throw new RangeError(`windowedMeans: ${name} must be an integer ≥ ${min}, got ${v}`);
  return v;
}

export function windowedMeans(samples: readonly number[], options: WindowOptions = {}): WindowedMeans {
  const window = wholeNumber("window", options.window ?? 100, 1);
  const last = wholeNumber("last", options.last ?? 500, window);
  if (last % window !== 0) throw new RangeError(`windowedMeans: last (${last}) must be a multiple of window (${window})`);
  const end = wholeNumber("end", options.end ?? samples.length, 0);
  if (end > samples.length) throw new RangeError(`windowedMeans: end (${end}) is past the ${samples.length} samples`);

  const windows = Math.min(last, end - (end % window)) / window;
  const rows: WindowRow[] = [];
  for (let w = windows; w >= 1; w--) {
    const from = w * window;
    const to = from - window + 1;
    const start = end - from;
    const stop = start + window;
    let sum = 0;
    for (let i = start; i < stop; i++) sum += samples[i]!;
    rows.push({
      label: w === 1 ? `Last ${window} records` : `Records ${from}-${to}`,
      from,
      to,
      start,
      stop,
      count: window,
      mean: sum / window,
    });
  }
  const final = rows.at(-1);
  const previous = rows.at(-2);
  return { rows, finalChange: final && previous ? final.mean - previous.mean : undefined };
}

/** "down by 166.29 µs", "up by 69.76 µs", "no change" (at the given precision). */
export function describeChange(change: number, unit = "µs", digits = 2): string {
  const text = Math.abs(change).toFixed(digits);
  if (Number(text) === 0) return "no change";
  return `${change < 0 ? "down" : "up"} by ${text} ${unit}`;
}
