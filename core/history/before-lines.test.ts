// Audits recorded before orders had lines and currencies (issue 32) replay and backtest exactly as they did: the run
// in fixtures/before-lines.audit.jsonl was recorded by `claims batch --in-process` on the commit before the change
// (af12cf6, the bundled scenarios with fixtures/before-lines.config.yaml), and is never re-recorded.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../integrity/audit.ts";
import { parseConfig } from "../claim/config.ts";
import { backtest } from "./backtest/index.ts";
import { replayClaim } from "./replay/index.ts";

const read = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
const events: AuditEvent[] = read("before-lines.audit.jsonl")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as AuditEvent);
const claimIds = [
  ...new Set(events.map((e) => e.details?.claim_id).filter((id): id is string => typeof id === "string")),
];

describe("an audit recorded before orders had lines", () => {
  it("holds the whole bundled run: claims of every outcome, one-line EUR orders only", () => {
    expect(claimIds.length).toBeGreaterThanOrEqual(34);
    const verdicts = events.filter((e) => e.event_type === "KERNEL_VERDICT").map((e) => e.details.verdict);
    expect(new Set(verdicts)).toEqual(new Set(["ACCEPT", "REJECT", "ESCALATE"]));
  });

  it("replays every claim IDENTICAL", () => {
    const statuses = claimIds.map((id) => [id, replayClaim(id, events).status]);
    expect(statuses.filter(([, status]) => status !== "IDENTICAL")).toEqual([]);
  });

  it("backtests against its own policy with no flip, and the same totals before and after", () => {
    const policy = parseConfig(
      read("before-lines.config.yaml"),
      "before-lines.config.yaml",
      Date.parse("2026-12-06T23:49:45Z"),
    ).agent;
    const report = backtest({ histories: [{ id: "before-lines", events }], policy });
    expect(report.flips).toEqual([]);
    expect(report.evaluated).toBeGreaterThan(30);
    expect(report.totals.after).toEqual(report.totals.before);
  });
});
