// The order `npm test` starts its files in (vitest.config.ts's sequencer): the longest first, so the last file to end
// is not a long one started late — as vitest does on its own only with its results cache, which a fresh clone has
// not. How long each file took comes from that cache where it has the file, else from the list committed beside this
// script (scripts/test-durations.json, written by `npm run test:durations` from a JSON report). The quick project's
// files stay together in one run of the queue, and so do the slow-shared project's: their workers run without
// isolation and are kept for the next file only while the next one is of the same project (a file of another project
// between two quick ones would cost a new worker and its imports again).
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * A test file to order: its path from the root, whether it is a quick one or a slow one that shares its worker
 * (project `slow-shared`), and how long it last took (ms), if known.
 */
export interface TimedFile {
  readonly path: string;
  readonly quick: boolean;
  readonly shared?: boolean;
  readonly ms: number | undefined;
}

/** Where the committed durations live. */
export const DURATIONS_FILE = "scripts/test-durations.json";

/**
 * The files in the order to start them: the files never timed first (a new file may be long), then the slow files
 * that take longer than the longest quick one or than a quarter of the longest file, longest first, then every quick
 * file (longest first), then the other slow files, longest first, those that share their worker together after those
 * that do not. Ties keep the path order, so the order is the same on every machine.
 */
export function startOrder<F extends TimedFile>(files: readonly F[]): F[] {
  const longestFirst = (a: F, b: F) => (b.ms ?? 0) - (a.ms ?? 0) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  const untimed = files.filter((f) => f.ms === undefined).sort(longestFirst);
  const timed = files.filter((f) => f.ms !== undefined);
  const quick = timed.filter((f) => f.quick).sort(longestFirst);
  const slow = timed.filter((f) => !f.quick).sort(longestFirst);
  // One long quick file (a loaded run timed core/history/replay at 148 s) must not send every long slow file behind
  // the quick ones: the slow files a quarter as long as the longest file go first too.
  const longest = Math.max(0, ...timed.map((f) => f.ms!));
  const threshold = Math.min(quick[0]?.ms ?? 0, longest / 4);
  const before = slow.filter((f) => f.ms! > threshold);
  const after = slow.filter((f) => f.ms! <= threshold);
  // Untimed quick files join the quick block (ahead of it), so quick files stay together; the shared slow files after
  // the quick ones stay together too.
  return [
    ...untimed.filter((f) => !f.quick),
    ...before,
    ...untimed.filter((f) => f.quick),
    ...quick,
    ...after.filter((f) => !f.shared),
    ...after.filter((f) => f.shared),
  ];
}

/** The committed durations (ms by path from the root); empty when the file is missing or unreadable. */
export function committedDurations(file = DURATIONS_FILE): Map<string, number> {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as { files?: Record<string, unknown> };
    return new Map(
      Object.entries(parsed.files ?? {}).filter((e): e is [string, number] => typeof e[1] === "number" && e[1] >= 0),
    );
  } catch {
    return new Map();
  }
}

/** What vitest's JSON reporter wrote that this needs: each file's absolute path and when it started and ended. */
interface JsonReport {
  testResults: { name: string; startTime: number; endTime: number }[];
}

/** Each file's wall time (ms, rounded) in a vitest JSON report, by path from `root`. */
export function durationsFromReport(report: JsonReport, root: string): Record<string, number> {
  const entries = report.testResults
    .map((r) => [relative(root, r.name), Math.max(0, Math.round(r.endTime - r.startTime))] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

// `npm run test:durations -- <a JSON report of a whole run>`: rewrites scripts/test-durations.json.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const report = process.argv[2];
  if (!report) {
    process.stderr.write(
      "usage: npm run test:durations -- <file>  (from: npx vitest run --reporter=json --outputFile=<file>)\n",
    );
    process.exit(2);
  }
  const files = durationsFromReport(JSON.parse(readFileSync(report, "utf8")) as JsonReport, process.cwd());
  const note =
    "Each test file's wall time (ms) in one whole run, read by vitest.config.ts's sequencer to start the longest first where vitest's results cache has no entry (a fresh clone). Written by `npm run test:durations -- <file>`.";
  writeFileSync(DURATIONS_FILE, `${JSON.stringify({ note, files }, null, 2)}\n`);
  process.stdout.write(`${DURATIONS_FILE}: ${Object.keys(files).length} files\n`);
}
