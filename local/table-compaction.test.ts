// The kept table's compaction while serve runs (issue 39): due only once the table's files grew well past their size
// after the last compaction, one at a time, and measured again after each.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compactionDue, directoryBytes, scheduleTableCompaction } from "./table-compaction.ts";

const MB = 1 << 20;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("table compaction while running", () => {
  it("is due past 1.5 × the size after the last compaction plus 32 MB, not before", () => {
    expect(compactionDue(32 * MB, 0)).toBe(false);
    expect(compactionDue(32 * MB + 1, 0)).toBe(true);
    expect(compactionDue(182 * MB, 100 * MB)).toBe(false);
    expect(compactionDue(183 * MB, 100 * MB)).toBe(true);
  });

  it("compacts once when due, measures the directory again, and runs one compaction at a time", async () => {
    const dir = mkdtempSync(join(tmpdir(), "claims-compaction-"));
    dirs.push(dir);
    writeFileSync(join(dir, "000001.ldb"), Buffer.alloc(MB));
    let calls = 0;
    const schedule = scheduleTableCompaction({
      dir,
      everyMs: 0,
      compact: async () => {
        calls++;
        // What a compaction leaves: the overwritten data gone.
        rmSync(join(dir, "000002.ldb"));
        return true;
      },
    });
    expect(await schedule.check()).toBe(false);
    writeFileSync(join(dir, "000002.ldb"), Buffer.alloc(40 * MB));
    const [a, b] = await Promise.all([schedule.check(), schedule.check()]);
    expect([a, b, calls]).toEqual([true, true, 1]);
    expect(schedule.stats()).toEqual({ compactions: 1, lastCompactedBytes: MB });
    expect(directoryBytes(dir)).toBe(MB);
    expect(await schedule.check()).toBe(false);
    schedule.stop();
  });

  it("counts nothing when the table keeps no files (in memory) or its compaction cannot run", async () => {
    expect(directoryBytes(join(tmpdir(), "claims-no-such-dir-39"))).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "claims-compaction-"));
    dirs.push(dir);
    const schedule = scheduleTableCompaction({ dir, everyMs: 0, compact: async () => false });
    writeFileSync(join(dir, "000003.ldb"), Buffer.alloc(40 * MB));
    expect(await schedule.check()).toBe(false);
    expect(schedule.stats().compactions).toBe(0);
  });
});
