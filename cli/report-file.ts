// Writes the HTML audit report to a file.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { AuditEvent } from "../core/integrity/audit.ts";
import { ReportWriteError } from "../report/errors.ts";
import { renderReport } from "../report/render.ts";
import type { RenderOptions } from "../report/render.ts";

/** Renders `events` and writes the report to `outPath` (parent folders created); returns the absolute path. */
export function writeReport(events: readonly AuditEvent[], outPath: string, opts: RenderOptions = {}): string {
  const path = resolve(outPath);
  const page = renderReport(events, opts);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, page, "utf8");
  } catch (cause) {
    throw new ReportWriteError(`could not write the report to ${path}: ${(cause as Error).message}`, cause);
  }
  return path;
}
