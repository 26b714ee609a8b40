// What `claims serve` holds in memory, as its memory report prints it (CLAIMS_MEMORY_REPORT_S, docs/local-stack.md):
// the process's resident memory and, per thread, the V8 heap (used / total), the memory outside it (external: Buffers
// and the like), and what each emulator adds (dynalite: LevelDB's memtables and block cache, the iterators open).
import { getHeapStatistics } from "node:v8";

/** One thread's memory in MB (and, for an emulator, its own figures). */
export type ThreadMemory = { used: number; total: number; external: number; malloced: number } & Record<string, number>;

const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

/** The calling thread's heap, in MB. */
export function threadMemory(): ThreadMemory {
  const heap = getHeapStatistics();
  return {
    used: mb(heap.used_heap_size),
    total: mb(heap.total_heap_size),
    external: mb(heap.external_memory),
    malloced: mb(heap.malloced_memory),
  };
}

/** The process's memory report: RSS and array buffers (MB), each thread's heap, and the counts of what is kept per claim. */
export type MemoryReport = {
  rss_mb: number;
  array_buffers_mb: number;
  threads: Record<string, ThreadMemory>;
  kept: Record<string, number>;
};

/** The report of this process: `threads` and `kept` as the stack gathered them, beside the main thread's heap. */
export function memoryReport(
  threads: Record<string, ThreadMemory | undefined>,
  kept: Record<string, number>,
): MemoryReport {
  const usage = process.memoryUsage();
  const known = Object.fromEntries(
    Object.entries(threads).filter((e): e is [string, ThreadMemory] => e[1] !== undefined),
  );
  return {
    rss_mb: mb(usage.rss),
    array_buffers_mb: mb(usage.arrayBuffers),
    threads: { main: threadMemory(), ...known },
    kept,
  };
}
