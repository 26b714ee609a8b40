import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { createAgentRegistry } from "../integrity/registry.ts";
import { buildProposal } from "../integrity/proposal.ts";
import { parseIsoMs } from "../integrity/time.ts";
import { assessClaim } from "../agents/rules-assessment.ts";
import { IsoDateSchema } from "../claim/claim.ts";
import { parseConfig } from "../claim/config.ts";
import { decideClaim } from "./kernel.ts";
import { resolveDate } from "../claim/relative-date.ts";
import { parseScenarios } from "../history/scenarios.ts";

// Verdicts never depend on the machine's time zone (docs/config.md): a timestamp without an offset is UTC.
// The table below is computed under several TZ values in this process (Node re-reads process.env.TZ when it
// is assigned), and the kernel's own test files are run again in child processes under other time zones.

const ZONES = ["UTC", "Asia/Tokyo", "America/Los_Angeles", "Pacific/Kiritimati", "Pacific/Pago_Pago"];
const NOW_MS = Date.UTC(2026, 2, 20, 9); // 2026-03-20T09:00:00Z: the fixture's run clock
const NOW = new Date(NOW_MS).toISOString();
const fixture = (name: string) => readFileSync(new URL(`../../scenarios/fixtures/${name}`, import.meta.url), "utf8");

/** Everything that reads a date from user data, with the fixture's offset-less dates, as one plain table. */
function decisionsTable() {
  const config = parseConfig(fixture("dir-seed-era.config.yaml"), "seed-era.yaml", NOW_MS);
  const scenarios = parseScenarios(fixture("dir-seed-era.scenarios.yaml"), "seed-era.scenarios.yaml");
  const registry = createAgentRegistry({ acceptedMajor: 1 });
  registry.handshake({
    agent_id: config.agent.agentId,
    version: config.agent.version,
    contract: config.agent.responsibility,
  });
  const orders = new Map(config.orders.map((o) => [o.order_id, o]));
  const verdicts = scenarios.flatMap((s) => {
    if (!("claim" in s.input)) return [];
    const claim = s.input.claim;
    const proposal = buildProposal({
      dfid: `dfid_${s.id}`,
      agentId: config.agent.agentId,
      output: {
        action: "REFUND",
        order_id: claim.order_id,
        amount_eur: claim.amount_eur,
        category: claim.category,
        reason: claim.reason,
        confidence: 0.9,
      },
      createdAt: NOW,
      validForMs: 600_000,
    });
    const v = decideClaim({
      proposal,
      claim,
      contract: config.agent.contract,
      responsibility: config.agent.responsibility,
      registry: registry.snapshot(),
      order: orders.get(claim.order_id),
      ledgerEntry: undefined,
      receivedAt: NOW,
      decidedAt: NOW,
    });
    // The rules model reads the claim's own purchase date: give it the order's date without an offset.
    const window = assessClaim(
      { ...claim, purchase_date: orders.get(claim.order_id)?.purchase_date.replace("T", " ").replace(".000Z", "") },
      config.agent.contract,
      { receivedAt: NOW },
    )
      .flags.map((f) => f.code)
      .filter((c) => /WINDOW|FUTURE/.test(c));
    return [[s.id, `${v.verdict} ${v.reason_code}`, window.join(",") || "in window"]];
  });
  return {
    purchaseDates: config.orders.map((o) => `${o.order_id} ${o.purchase_date}`),
    verdicts,
    resolveDate: ["2026-05-06 12:00:00", "2026-05-06T12:00:00", "2026-05-06", "2026-05-06T12:00:00+02:00"].map((d) =>
      resolveDate(d, NOW_MS),
    ),
    parseIsoMs: ["2026-05-06 12:00:00", "2026-05-06T12:00", "2026-05-06"].map((d) => parseIsoMs(d)),
    claimDate: ["2026-05-06 12:00:00", "2026-02-30"].map((d) => IsoDateSchema.safeParse(d).success),
  };
}

const originalTz = process.env.TZ;
afterEach(() => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
});

describe("decisions do not depend on the machine's time zone", () => {
  it("reads offset-less dates as UTC, so the fixture's window boundary row is decided the same everywhere", () => {
    process.env.TZ = "Asia/Tokyo";
    // The check is only meaningful if this process really switched zones.
    expect(new Date(2026, 0, 1).getTimezoneOffset()).toBe(-540);
    const table = decisionsTable();
    expect(table.verdicts).toContainEqual(["W7", "ACCEPT VALIDATION_PASSED", "in window"]);
    expect(table.verdicts).toContainEqual(["G1", "ACCEPT VALIDATION_PASSED", "in window"]);
    expect(table.purchaseDates).toContain("ord_107 2026-02-18T10:00:00.000Z");
    expect(table.resolveDate).toEqual([
      "2026-05-06T12:00:00.000Z",
      "2026-05-06T12:00:00.000Z",
      "2026-05-06T00:00:00.000Z",
      "2026-05-06T10:00:00.000Z",
    ]);
    expect(table.parseIsoMs).toEqual([Date.UTC(2026, 4, 6, 12), Date.UTC(2026, 4, 6, 12), Date.UTC(2026, 4, 6)]);
    expect(table.claimDate).toEqual([true, false]);
  });

  it.each(ZONES.slice(1))("gives the same table under TZ=%s as under UTC", (zone) => {
    process.env.TZ = "UTC";
    const utc = decisionsTable();
    process.env.TZ = zone;
    expect(decisionsTable()).toEqual(utc);
  });
});

/** The environment without this vitest worker's own variables, so the child is a fresh run. */
function withoutVitestEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([k]) => !k.startsWith("VITEST") && k !== "NODE_OPTIONS" && k !== "TEST"),
  );
}

describe("the kernel's tests under other time zones", () => {
  const run = promisify(execFile);
  const root = new URL("../..", import.meta.url).pathname;
  // Not this file: its table sets TZ itself in each test, so it reads the same under any zone the child starts in.
  // The three are quick-tier tests: the child runs that project alone, in one worker (a second one, or the slow
  // project's, would import vitest and the kernel again for nothing).
  const files = ["core/kernel/kernel.test.ts", "core/integrity/time.test.ts", "core/claim/config.test.ts"];

  // A child vitest per zone (the child skips this block, so it does not recurse).
  it.skipIf(process.env.CLAIMS_TZ_CHILD === "1").each(["Asia/Tokyo", "America/Los_Angeles"])(
    "pass under TZ=%s",
    async (zone) => {
      const vitest = new URL("../../node_modules/vitest/vitest.mjs", import.meta.url).pathname;
      const { stdout } = await run(
        process.execPath,
        [vitest, "run", "--project", "quick", ...files, "--reporter=dot"],
        {
          cwd: root,
          env: {
            ...withoutVitestEnv(process.env),
            TZ: zone,
            CLAIMS_TZ_CHILD: "1",
            CLAIMS_TEST_WORKERS: "1",
            NO_COLOR: "1",
          },
          maxBuffer: 16 * 1024 * 1024,
        },
      ).catch((e: { stdout?: string; stderr?: string }) => {
        throw new Error(`the kernel tests fail under TZ=${zone}:\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
      });
      expect(stdout).toMatch(/Test Files\s+3 passed/);
    },
    120_000,
  );
});
