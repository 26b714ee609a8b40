// Purchase dates in the configuration: an ISO date/timestamp (UTC unless it says otherwise) or an offset from the run's clock.
import { parseIsoMs } from "../integrity/time.ts";

const RELATIVE = /^([+-])(\d+(?:\.\d+)?)(d|h|m)$/;
const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/**
 * Resolves an ISO date or an offset like `-3d` / `-36h` against `nowMs` to an ISO timestamp; undefined when neither.
 * A date or date-time without an offset (`2026-05-06`, `2026-05-06 12:00:00`) is UTC, never the machine's local time.
 */
export function resolveDate(value: string, nowMs: number): string | undefined {
  const trimmed = value.trim();
  const m = RELATIVE.exec(trimmed);
  if (m) {
    const sign = m[1] === "-" ? -1 : 1;
    const amount = Number(m[2]);
    return new Date(nowMs + sign * amount * UNIT_MS[m[3] as keyof typeof UNIT_MS]).toISOString();
  }
  const ms = parseIsoMs(trimmed);
  return ms === undefined ? undefined : new Date(ms).toISOString();
}
