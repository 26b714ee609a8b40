// The kept table compacted while `claims serve` runs (issue 39): LevelDB rewrites its files on its own only level by
// level, so what later writes replaced (a claim's record updated four times, a crew session saved six) can stay on
// disk long after; a restart used to be what compacted it. Every `everyMs` the table's directory is measured, and when
// it has grown past `growth` times its size after the last compaction plus `slackBytes`, the whole table is compacted
// (LevelDB's compactRange, in dynalite's thread; claims keep being served meanwhile).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The bytes of the files directly in `dir` (LevelDB keeps no subdirectories); 0 when it cannot be read. */
export function directoryBytes(dir: string): number {
  let total = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    try {
      total += statSync(join(dir, name)).size;
    } catch {
      // removed by a compaction meanwhile
    }
  }
  return total;
}

/** When to compact: the directory has grown past `growth` × its size after the last compaction + `slackBytes`. */
export function compactionDue(bytes: number, lastCompactedBytes: number, growth = 1.5, slackBytes = 32 << 20): boolean {
  return bytes > lastCompactedBytes * growth + slackBytes;
}

/** A running compaction schedule. */
export type TableCompaction = {
  /** Measures now and compacts if due; resolves with whether it compacted. */
  check(): Promise<boolean>;
  /** How many compactions ran, and the directory's size after the last one. */
  stats(): { compactions: number; lastCompactedBytes: number };
  stop(): void;
};

/** Checks `dir` every `everyMs` (0: only when `check` is called) and compacts through `compact` when due. */
export function scheduleTableCompaction(options: {
  dir: string;
  compact: () => Promise<boolean>;
  everyMs: number;
  onError?: (error: Error) => void;
}): TableCompaction {
  let lastCompactedBytes = directoryBytes(options.dir);
  let compactions = 0;
  let running: Promise<boolean> | undefined;
  const run = async () => {
    if (!compactionDue(directoryBytes(options.dir), lastCompactedBytes)) return false;
    const done = await options.compact();
    if (done) {
      compactions++;
      lastCompactedBytes = directoryBytes(options.dir);
    }
    return done;
  };
  const check = (): Promise<boolean> => {
    if (running) return running;
    const current = run().finally(() => {
      if (running === current) running = undefined;
    });
    running = current;
    return current;
  };
  const timer =
    options.everyMs > 0
      ? setInterval(
          () =>
            void check().catch((e: unknown) =>
              (options.onError ?? ((error: Error) => console.error(`[table] compaction failed: ${error.message}`)))(
                e as Error,
              ),
            ),
          options.everyMs,
        )
      : undefined;
  timer?.unref();
  return {
    check,
    stats: () => ({ compactions, lastCompactedBytes }),
    stop: () => clearInterval(timer),
  };
}
