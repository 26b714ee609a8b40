// The measuring every bench shares. Comparisons are timed side by side: the contenders take turns
// round by round (the order rotating each round), each sample is timed in CPU time of this process
// (process.cpuUsage, user + system: what the work cost, whatever else the shared machine runs), and
// the low end over the rounds is the figure quoted, with the median and the per-round spread beside it.

/** A cumulative reading of CPU time and wall time, in nanoseconds. */
export type Reading = { cpuNs: number; wallNs: number };

/** Reads the clocks the harness uses; injectable so the harness's own tests need no real timing. */
export type Meter = () => Reading;

/** CPU time of this process (all its threads, GC included) and a monotonic wall clock. */
export const processMeter: Meter = () => {
  const u = process.cpuUsage();
  return { cpuNs: (u.user + u.system) * 1000, wallNs: performance.now() * 1e6 };
};

/** Runs `fn` (awaited when it returns a promise) and reports the CPU and wall time it took. */
export async function timed<T>(
  fn: () => T | Promise<T>,
  meter: Meter = processMeter,
): Promise<{ value: T; cpuNs: number; wallNs: number }> {
  const start = meter();
  const value = await fn();
  const end = meter();
  return { value, cpuNs: end.cpuNs - start.cpuNs, wallNs: end.wallNs - start.wallNs };
}

/** One side of a comparison. */
export type Contender = {
  name: string;
  /** The timed operation; a sample calls it `opsPerSample` times in a row. */
  op: () => unknown;
  /** Work units one op stands for (steps of a run, claims of a round); results are per unit. Default 1. */
  unitsPerOp?: number;
  /** Ops per sample. Default: calibrated after warm-up so a sample lasts about `targetSampleMs`. */
  opsPerSample?: number;
  /** Untimed, before each sample (e.g. building a fresh pipeline for the op to run). */
  before?: () => unknown;
  /** Untimed, after each sample (e.g. checking what the op did, dropping a finished thread). */
  after?: () => unknown;
  /** The clocks of this contender's samples when its work runs elsewhere (another process); default the interleave's. */
  meter?: Meter;
};

/** Options of {@link interleave}. */
export type InterleaveOptions = {
  /** Timed rounds; every contender takes one sample per round. Default 15. */
  rounds?: number;
  /** Untimed rounds first (JIT warm-up). Default 2. */
  warmupRounds?: number;
  /** Wall time a calibrated sample aims at. Default 25 ms. */
  targetSampleMs?: number;
  meter?: Meter;
};

/** What one contender measured: CPU and wall nanoseconds per unit, one value per timed round. */
export type ContenderResult = {
  name: string;
  opsPerSample: number;
  unitsPerOp: number;
  cpuNsPerUnit: number[];
  wallNsPerUnit: number[];
  /** The quoted figure: the lowest CPU ns per unit over the rounds. */
  lowCpuNs: number;
  medianCpuNs: number;
  highCpuNs: number;
  medianWallNs: number;
};

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";

async function settle(value: unknown): Promise<void> {
  if (isThenable(value)) await value;
}

const positiveInt = (name: string, value: number, min: number): number => {
  if (!Number.isInteger(value) || value < min)
    throw new RangeError(`interleave: ${name} must be an integer >= ${min}, got ${String(value)}`);
  return value;
};

/** The order contenders take their samples in round `round`: rotated by one each round (A B C, B C A, …). */
export function roundOrder<T>(items: readonly T[], round: number): T[] {
  const shift = items.length === 0 ? 0 : round % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/**
 * Times `contenders` side by side: after the warm-up rounds (which also calibrate `opsPerSample`
 * where it is not given), every round takes one sample of each contender in {@link roundOrder}, so
 * a change in the machine's load hits all of them alike. Per unit, per round, in CPU and wall time.
 */
export async function interleave(
  contenders: readonly Contender[],
  options: InterleaveOptions = {},
): Promise<ContenderResult[]> {
  if (contenders.length === 0) throw new RangeError("interleave: no contenders");
  const rounds = positiveInt("rounds", options.rounds ?? 15, 1);
  const warmupRounds = positiveInt("warmupRounds", options.warmupRounds ?? 2, 0);
  const targetNs = (options.targetSampleMs ?? 25) * 1e6;
  const meter = options.meter ?? processMeter;
  const ops = contenders.map((c) =>
    c.opsPerSample === undefined ? 1 : positiveInt(`${c.name} opsPerSample`, c.opsPerSample, 1),
  );
  const units = contenders.map((c) => c.unitsPerOp ?? 1);
  const cpu: number[][] = contenders.map(() => []);
  const wall: number[][] = contenders.map(() => []);

  const sample = async (i: number): Promise<Reading> => {
    const c = contenders[i]!;
    await settle(c.before?.());
    const m = c.meter ?? meter;
    const start = m();
    for (let k = 0; k < ops[i]!; k++) await settle(c.op());
    const end = m();
    await settle(c.after?.());
    return { cpuNs: end.cpuNs - start.cpuNs, wallNs: end.wallNs - start.wallNs };
  };

  const indexes = contenders.map((_, i) => i);
  for (let r = 0; r < warmupRounds; r++) for (const i of roundOrder(indexes, r)) await sample(i);
  for (const i of indexes) {
    if (contenders[i]!.opsPerSample !== undefined) continue;
    const one = await sample(i);
    ops[i] = Math.max(1, Math.min(1_000_000, Math.ceil(targetNs / Math.max(one.wallNs, 1))));
  }
  for (let r = 0; r < rounds; r++) {
    for (const i of roundOrder(indexes, r)) {
      const s = await sample(i);
      const per = ops[i]! * units[i]!;
      cpu[i]!.push(s.cpuNs / per);
      wall[i]!.push(s.wallNs / per);
    }
  }
  return contenders.map((c, i) => {
    const sorted = [...cpu[i]!].sort((a, b) => a - b);
    return {
      name: c.name,
      opsPerSample: ops[i]!,
      unitsPerOp: units[i]!,
      cpuNsPerUnit: cpu[i]!,
      wallNsPerUnit: wall[i]!,
      lowCpuNs: sorted[0]!,
      medianCpuNs: quantile(sorted, 0.5),
      highCpuNs: sorted[sorted.length - 1]!,
      medianWallNs: quantile(
        [...wall[i]!].sort((a, b) => a - b),
        0.5,
      ),
    };
  });
}

/** How many times `slower` costs `faster`: the quoted ratio of their low ends, and the spread of the per-round ratios. */
export type Comparison = { quoted: number; low: number; median: number; high: number };

/** Compares two contenders measured in the same {@link interleave} call, round by round. */
export function compare(slower: ContenderResult, faster: ContenderResult): Comparison {
  if (slower.cpuNsPerUnit.length !== faster.cpuNsPerUnit.length) {
    throw new RangeError(`compare: ${slower.name} and ${faster.name} were not measured in the same rounds`);
  }
  const perRound = slower.cpuNsPerUnit.map((s, r) => ratio(s, faster.cpuNsPerUnit[r]!)).sort((a, b) => a - b);
  return {
    quoted: ratio(slower.lowCpuNs, faster.lowCpuNs),
    low: perRound[0]!,
    median: quantile(perRound, 0.5),
    high: perRound[perRound.length - 1]!,
  };
}

/** A ratio for a table: the quoted value with the per-round range, e.g. `138× (119–152)`. */
export function ratioText(c: Comparison): string {
  const x = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
  return `${x(c.quoted)}× (${x(c.low)}–${x(c.high)})`;
}

/** A table row: column name → cell. */
export type TableRow = Record<string, string | number>;

/** Value at quantile q (0..1) of an ascending-sorted array, nearest-rank method. */
export function quantile(sortedAscending: readonly number[], q: number): number {
  if (sortedAscending.length === 0) throw new RangeError("quantile: no samples");
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be within 0..1, got ${String(q)}`);
  const rank = Math.max(1, Math.ceil(q * sortedAscending.length));
  return sortedAscending[rank - 1] as number;
}

/** The quantile of unsorted values. */
export const quantileOf = (values: readonly number[], q: number): number =>
  quantile(
    [...values].sort((a, b) => a - b),
    q,
  );

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

/** Microseconds for a table: 3 significant-ish digits. */
export const us = (ns: number): number => {
  const v = ns / 1000;
  return Number(v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2));
};

/**
 * Reads a bench's size settings from the environment: `num(NAME, fallback, min)` is the integer in NAME, the
 * fallback when unset or empty, and a RangeError naming the bench and the setting otherwise.
 */
export function envIntReader(
  bench: string,
  env: Readonly<Record<string, string | undefined>>,
): (name: string, fallback: number, min: number) => number {
  return (name, fallback, min) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new RangeError(`${bench} bench: ${name} must be an integer ≥ ${min}, got "${raw}"`);
    return n;
  };
}
