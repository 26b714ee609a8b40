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
  const fast = parseCanonicalIso(value);
  if (fast !== undefined) return fast;
  const m = ISO.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  let text = `${y}-${mo}-${d}T${h ?? "00"}:${mi ?? "00"}:${s ?? "00"}`;
  if (frac !== undefined) text += `.${frac.slice(0, 3).padEnd(3, "0")}`;
  text +=
    zone === undefined || zone.toUpperCase() === "Z"
      ? "Z"
      : zone.length === 5
        ? `${zone.slice(0, 3)}:${zone.slice(3)}`
        : zone;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over to March; refuse dates that do not exist.
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d)
  )
    return undefined;
  return ms;
}

/** The digit at `i` of `s` (0–9), or NaN. */
function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : Number.NaN;
}

/**
 * The common case of `parseIsoMs` without a regular expression: exactly `YYYY-MM-DDTHH:MM:SS.sssZ` (what
 * `Date.prototype.toISOString` writes, and every timestamp this app stores), year 1000 or later, every field
 * in range and the day existing. Anything else (undefined) takes the general path, which answers the same
 * for these strings.
 */
function parseCanonicalIso(s: string): number | undefined {
  if (
    s.length !== 24 ||
    s.charCodeAt(4) !== 45 ||
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 84 ||
    s.charCodeAt(13) !== 58 ||
    s.charCodeAt(16) !== 58 ||
    s.charCodeAt(19) !== 46 ||
    s.charCodeAt(23) !== 90
  )
    return undefined;
  const y = digit(s, 0) * 1000 + digit(s, 1) * 100 + digit(s, 2) * 10 + digit(s, 3);
  const mo = digit(s, 5) * 10 + digit(s, 6);
  const d = digit(s, 8) * 10 + digit(s, 9);
  const h = digit(s, 11) * 10 + digit(s, 12);
  const mi = digit(s, 14) * 10 + digit(s, 15);
  const sec = digit(s, 17) * 10 + digit(s, 18);
  const ms = digit(s, 20) * 100 + digit(s, 21) * 10 + digit(s, 22);
  // NaN fails every comparison: a non-digit anywhere lands in the general path.
  if (!(y >= 1000 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && sec <= 59 && ms >= 0))
    return undefined;
  // A day the month does not have (2026-02-30) is refused by the general path: leave it to it.
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (mo === 2 ? (leap ? 29 : 28) : MONTH_DAYS[mo - 1]!)) return undefined;
  return Date.UTC(y, mo - 1, d, h, mi, sec, ms);
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

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
