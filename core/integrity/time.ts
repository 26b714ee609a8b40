// ISO-8601 timestamps to epoch milliseconds, deterministic across machine time zones.

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** One day in milliseconds (24 h; the kernel counts windows in 24-hour days, not calendar days). */
export const DAY_MS = 86_400_000;

/**
 * Epoch milliseconds of an ISO-8601 date or date-time, or `undefined` when it is not one.
 * A date alone is midnight UTC and a date-time without an offset is read as UTC (never local time),
 * so the result never depends on the machine's time zone.
 */
export function parseIsoMs(value: string): number | undefined {
  const m = ISO.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  let text = `${y}-${mo}-${d}T${h ?? "00"}:${mi ?? "00"}:${s ?? "00"}`;
  if (frac !== undefined) text += `.${frac.slice(0, 3).padEnd(3, "0")}`;
  text += zone === undefined || zone.toUpperCase() === "Z" ? "Z" : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over to March; refuse dates that do not exist.
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return undefined;
  return ms;
}

/** A short human text for a non-negative duration, e.g. `74 days`, `14 days 1 s`, `3 h 20 min`. */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  const days = Math.floor(abs / DAY_MS);
  const h = Math.floor((abs % DAY_MS) / 3_600_000);
  const min = Math.floor((abs % 3_600_000) / 60_000);
  const s = Math.floor((abs % 60_000) / 1000);
  const rest = abs % 1000;
  const parts: string[] = [];
  if (days) parts.push(`${days} day${days === 1 ? "" : "s"}`);
  if (h) parts.push(`${h} h`);
  if (min) parts.push(`${min} min`);
  if (s) parts.push(`${s} s`);
  if (rest) parts.push(`${rest} ms`);
  return parts.length ? parts.join(" ") : "0 s";
}
