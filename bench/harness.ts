// Tiny measurement helpers shared by every bench: timed loops with warm-up, GC, tables, ratios.

/** Options for {@link measure}; every field has a default. */
export type MeasureOptions = {
  /** Untimed calls before sampling starts (JIT warm-up). Default 20. */
  warmupIterations?: number;
  /** Minimum number of timed samples. Default 100. */
  iterations?: number;
  /** Keep sampling until at least this much timed wall time has passed. Default 500 ms. */
  minMs?: number;
  /** Calls of `fn` per sample; raise it for sub-microsecond operations so timer overhead vanishes. Default 1. */
  opsPerSample?: number;
  /** Runs after each sample, outside the timed region (e.g. dropping a finished thread). */
  afterSample?: () => unknown;
};

/** Stats of one measurement, all in nanoseconds per call of `fn`. */
export type MeasureResult = {
  name: string;
  samples: number;
  ops: number;
  medianNs: number;
  p95Ns: number;
  meanNs: number;
  minNs: number;
};

/** A table row: column name → cell. */
export type TableRow = Record<string, string | number>;

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";

const positiveInt = (name: string, value: number, min: number): number => {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`measure: ${name} must be an integer >= ${min}, got ${String(value)}`);
  }
  return value;
};

/** Value at quantile q (0..1) of an ascending-sorted array, nearest-rank method. */
export function quantile(sortedAscending: readonly number[], q: number): number {
  if (sortedAscending.length === 0) throw new RangeError("quantile: no samples");
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be within 0..1, got ${String(q)}`);
  const rank = Math.max(1, Math.ceil(q * sortedAscending.length));
  return sortedAscending[rank - 1] as number;
}

/**
 * Times `fn` (awaited when it returns a promise): warm-up calls first, then samples of
 * `opsPerSample` calls each until both `iterations` samples and `minMs` of timed wall time are
 * reached. Reports ns per call; the median is the number to quote.
 */
export async function measure(
  name: string,
  fn: () => unknown,
  options: MeasureOptions = {},
): Promise<MeasureResult> {
  const warmup = positiveInt("warmupIterations", options.warmupIterations ?? 20, 0);
  const iterations = positiveInt("iterations", options.iterations ?? 100, 1);
  const opsPerSample = positiveInt("opsPerSample", options.opsPerSample ?? 1, 1);
  const minMs = options.minMs ?? 500;
  if (!(minMs >= 0)) throw new RangeError(`measure: minMs must be >= 0, got ${String(minMs)}`);
  const afterSample = options.afterSample;

  for (let i = 0; i < warmup; i++) {
    const out = fn();
    if (isThenable(out)) await out;
    if (afterSample) {
      const done = afterSample();
      if (isThenable(done)) await done;
    }
  }

  const minNs = BigInt(Math.round(minMs * 1e6));
  const samples: number[] = [];
  let timedNs = 0n;
  while (samples.length < iterations || timedNs < minNs) {
    const start = process.hrtime.bigint();
    for (let k = 0; k < opsPerSample; k++) {
      const out = fn();
      if (isThenable(out)) await out;
    }
    const elapsed = process.hrtime.bigint() - start;
    timedNs += elapsed;
    samples.push(Number(elapsed) / opsPerSample);
    if (afterSample) {
      const done = afterSample();
      if (isThenable(done)) await done;
    }
  }

  const sorted = [...samples].sort((a, b) => a - b);
  const sum = samples.reduce((acc, x) => acc + x, 0);
  return {
    name,
    samples: samples.length,
    ops: samples.length * opsPerSample,
    medianNs: quantile(sorted, 0.5),
    p95Ns: quantile(sorted, 0.95),
    meanNs: sum / samples.length,
    minNs: sorted[0] as number,
  };
}

/** Heap after a full GC when node runs with --expose-gc; `gcRan` says whether the GC happened. */
export function gcAndHeap(): { gcRan: boolean; heapUsedBytes: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === "function") gc();
  return { gcRan: typeof gc === "function", heapUsedBytes: process.memoryUsage().heapUsed };
}

const cellText = (cell: string | number | undefined): string => {
  if (cell === undefined) return "";
  if (typeof cell === "number") {
    if (!Number.isFinite(cell)) return String(cell);
    if (Number.isInteger(cell)) return String(cell);
    return cell.toFixed(Math.abs(cell) >= 100 ? 1 : Math.abs(cell) >= 1 ? 2 : 3);
  }
  return cell.replaceAll("|", "\\|");
};

/**
 * Aligned markdown table of `rows`; columns are the union of the rows' keys in first-seen order,
 * numbers are right-aligned.
 */
export function formatTable(rows: readonly TableRow[]): string {
  if (rows.length === 0) return "";
  const columns: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const numeric = columns.map((c) => rows.every((r) => r[c] === undefined || typeof r[c] === "number"));
  const body = rows.map((r) => columns.map((c) => cellText(r[c])));
  const widths = columns.map((c, i) => Math.max(3, c.length, ...body.map((cells) => (cells[i] as string).length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => (numeric[i] ? cell.padStart(widths[i] as number) : cell.padEnd(widths[i] as number))).join(" | ")} |`;
  const rule = `| ${widths.map((w, i) => (numeric[i] ? `${"-".repeat(w - 1)}:` : "-".repeat(w))).join(" | ")} |`;
  return [line(columns), rule, ...body.map(line)].join("\n");
}

/** a / b for "x times" comparisons; throws when either is not a finite number or b is not positive. */
export function ratio(a: number, b: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b)) {
    throw new RangeError(`ratio: both values must be finite numbers, got ${String(a)} and ${String(b)}`);
  }
  if (b <= 0) throw new RangeError(`ratio: divisor must be > 0, got ${String(b)}`);
  return a / b;
}
