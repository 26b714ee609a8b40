import { describe, expect, it } from "vitest";
import { threadCpuNs } from "./http.bench.ts";

const stat = (tid: number, name: string, utime: number, stime: number) =>
  `${tid} (${name}) S 1 ${tid} ${tid} 0 -1 4194560 100 0 0 0 ${utime} ${stime} 0 0 20 0 12 0 100 0 0`;

describe("the http bench's CPU by thread", () => {
  it("charges the thread whose id is the process's to main, the named emulators to themselves, the rest to other", () => {
    const out = threadCpuNs(100, [
      [100, stat(100, "node", 50, 10)],
      [101, stat(101, "node", 3, 1)],
      [102, stat(102, "dynalite", 20, 5)],
      [103, stat(103, "fauxqs", 4, 0)],
      [104, stat(104, "node", 2, 2)],
      [105, "105 (broken"],
    ]);
    // 100 ticks per second: 60 ticks = 0.6 s.
    expect(out).toEqual({ main: 0.6e9, dynalite: 0.25e9, fauxqs: 0.04e9, handlers: 0, other: 0.08e9 });
  });

  it("reads a thread name holding spaces and parentheses by its last parenthesis", () => {
    expect(threadCpuNs(7, [[8, stat(8, "a (b) c", 1, 1)]]).other).toBe(0.02e9);
  });
});
