// Writes the HTML audit report to a file.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { AuditEvent } from "../core/integrity/audit.ts";
import { ReportWriteError } from "../report/errors.ts";
import { renderReport } from "../report/render.ts";
import type { RenderOptions } from "../report/render.ts";

/** Renders `events` (with `render`, default the run report) and writes the report to `outPath` (parent folders created); returns the absolute path. */
export function writeReport<O extends RenderOptions>(
  events: readonly AuditEvent[],
  outPath: string,
  opts: O = {} as O,
  render: (events: readonly AuditEvent[], opts: O) => string = renderReport,
): string {
  const path = resolve(outPath);
  const page = render(events, opts);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, page, "utf8");
  } catch (cause) {
    throw new ReportWriteError(`could not write the report to ${path}: ${(cause as Error).message}`, cause);
  }
  return path;
}
