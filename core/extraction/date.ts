// Dates in customer text: ISO (`2026-02-20`) and prose (`20 February 2026`, `February 20, 2026`, `20 Feb`).

const MONTHS: Readonly<Record<string, number>> = {
  january: 1,
  jan: 1,
  february: 2,
  feb: 2,
  march: 3,
  mar: 3,
  april: 4,
  apr: 4,
  may: 5,
  june: 6,
  jun: 6,
  july: 7,
  jul: 7,
  august: 8,
  aug: 8,
  september: 9,
  sep: 9,
  sept: 9,
  october: 10,
  oct: 10,
  november: 11,
  nov: 11,
  december: 12,
  dec: 12,
};

const MONTH =
  "(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)";
const ISO_RE =
  /(?<![\w-])(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w-])/g;
const DAY_MONTH_RE = new RegExp(
  `\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\b\\.?(?:,?\\s+(\\d{4})\\b)?`,
  "gi",
);
const MONTH_DAY_RE = new RegExp(`\\b${MONTH}\\b\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4})\\b)?`, "gi");

/** A date found in text: its ISO form (`YYYY-MM-DD`) and where it was. */
interface FoundDate {
  readonly iso: string;
  readonly index: number;
  readonly length: number;
  readonly raw: string;
}

/** Dates found in text, in order, plus notes on dates that could not be used (no year, impossible day). */
export function findDates(text: string, now?: string | number): { dates: FoundDate[]; warnings: string[] } {
  const warnings: string[] = [];
  const found: FoundDate[] = [];
  const nowMs = now === undefined ? undefined : typeof now === "number" ? now : Date.parse(now);
  const push = (m: RegExpMatchArray, y: number | undefined, mo: number, d: number): void => {
    const raw = m[0];
    let year = y;
    if (year === undefined) {
      if (nowMs === undefined || Number.isNaN(nowMs)) {
        warnings.push(`date '${raw.trim()}' has no year and no reference date was given; ignored`);
        return;
      }
      const nowYear = new Date(nowMs).getUTCFullYear();
      year = Date.UTC(nowYear, mo - 1, d) > nowMs ? nowYear - 1 : nowYear;
    }
    const iso = isoDate(year, mo, d);
    if (iso === undefined) {
      warnings.push(`'${raw.trim()}' is not a real calendar date; ignored`);
      return;
    }
    found.push({ iso, index: m.index ?? 0, length: raw.length, raw });
  };
  for (const m of text.matchAll(ISO_RE)) push(m, Number(m[1]), Number(m[2]), Number(m[3]));
  for (const m of text.matchAll(DAY_MONTH_RE)) {
    push(m, m[3] === undefined ? undefined : Number(m[3]), MONTHS[(m[2] ?? "").toLowerCase()] ?? 0, Number(m[1]));
  }
  for (const m of text.matchAll(MONTH_DAY_RE)) {
    push(m, m[3] === undefined ? undefined : Number(m[3]), MONTHS[(m[1] ?? "").toLowerCase()] ?? 0, Number(m[2]));
  }
  found.sort((a, b) => a.index - b.index || b.length - a.length);
  const kept: FoundDate[] = [];
  for (const f of found) {
    const last = kept[kept.length - 1];
    if (last !== undefined && f.index < last.index + last.length) continue;
    kept.push(f);
  }
  return { dates: kept, warnings };
}

/** Normalises a date a model or customer wrote (ISO, ISO timestamp or prose with a year) to `YYYY-MM-DD`; undefined when it is none. */
export function normalizeDate(value: string, now?: string | number): string | undefined {
  const { dates } = findDates(value.trim(), now);
  const first = dates[0];
  return first !== undefined && dates.length === 1 ? first.iso : undefined;
}

function isoDate(y: number, m: number, d: number): string | undefined {
  if (!Number.isInteger(y) || y < 1900 || y > 2999 || m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  const ms = Date.UTC(y, m - 1, d);
  const back = new Date(ms);
  if (back.getUTCMonth() !== m - 1 || back.getUTCDate() !== d) return undefined;
  return `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}
