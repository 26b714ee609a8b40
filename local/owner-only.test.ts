// The data directory is owner-only: created 0700, an existing open one tightened with what it holds.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ensureOwnerOnlyDir } from "./owner-only.ts";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "claims-owner-only-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe("ensureOwnerOnlyDir", () => {
  it("creates a missing directory 0700, parents included", () => {
    const dir = join(root, "a", "b");
    expect(ensureOwnerOnlyDir(dir)).toBe(false);
    expect(modeOf(dir)).toBe(0o700);
  });

  it("tightens an existing 0755 directory to 0700 and its 0644 files to 0600, deep ones included", () => {
    const dir = join(root, "data");
    mkdirSync(join(dir, "runs", "sim_1"), { recursive: true });
    writeFileSync(join(dir, "events.jsonl"), "{}\n");
    writeFileSync(join(dir, "runs", "sim_1", "audit.jsonl"), "{}\n");
    for (const p of [dir, join(dir, "runs"), join(dir, "runs", "sim_1")]) chmodSync(p, 0o755);
    for (const p of [join(dir, "events.jsonl"), join(dir, "runs", "sim_1", "audit.jsonl")]) chmodSync(p, 0o644);
    const outside = join(root, "outside.txt");
    writeFileSync(outside, "not ours to change");
    chmodSync(outside, 0o644);
    symlinkSync(outside, join(dir, "link"));
    expect(ensureOwnerOnlyDir(dir)).toBe(true);
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(join(dir, "runs", "sim_1"))).toBe(0o700);
    expect(modeOf(join(dir, "events.jsonl"))).toBe(0o600);
    expect(modeOf(join(dir, "runs", "sim_1", "audit.jsonl"))).toBe(0o600);
    expect(modeOf(outside)).toBe(0o644);
  });

  it("leaves an owner-only directory as it is", () => {
    const dir = join(root, "ok");
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, "f"), "x", { mode: 0o640 });
    expect(ensureOwnerOnlyDir(dir)).toBe(false);
    expect(modeOf(join(dir, "f"))).toBe(0o640 & ~process.umask());
  });
});
