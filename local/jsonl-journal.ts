// Reading an append-only JSON-lines journal kept by the local stack (local/queue-journal.ts, local/payment-deliveries.ts):
// each line one record; a blank line or a torn one (the process died mid-write) is skipped.
import { existsSync, readFileSync } from "node:fs";

/** Replays a journal file's lines in order into `apply` (nothing when the file does not exist). */
export function replayJournalLines<Line>(path: string, apply: (line: Line) => void): void {
  if (!existsSync(path)) return;
  for (const text of readFileSync(path, "utf8").split("\n")) {
    if (text.trim() === "") continue;
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      continue;
    }
    apply(line);
  }
}
