// A run's folder is always inside <data-dir>/runs/: a simulation id that is a path, `..` or holds a control
// character is refused with a message naming it, so `claims report --simulation-id ..` cannot write elsewhere.
import { describe, expect, it } from "vitest";
import { runDir } from "./run-store.ts";
import { RunIdError } from "./errors.ts";

describe("runDir", () => {
  it("names the run's folder under runs/", () => {
    expect(runDir("/data", "sim_2026-06-01:a.b")).toBe("/data/runs/sim_2026-06-01:a.b");
  });

  it.each(["..", ".", "../outside", "a/b", "/etc", "sim\n1", "", "x".repeat(129)])("refuses %j", (id) => {
    expect(() => runDir("/data", id)).toThrow(RunIdError);
  });
});
