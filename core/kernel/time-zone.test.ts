import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
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
// Everything here runs in this process under other TZ values: Node re-reads process.env.TZ when it is assigned
// (checked on Node 20.20.2), for Date and for every Intl object made afterwards; an Intl.DateTimeFormat made before
// keeps the zone it was made in (the last block checks core/ makes none). The table below is computed under several
// zones, and the kernel's own test files are run again under two. The file shares a quick-tier worker with other
// files (isolate: false): TZ is set with vi.stubEnv and undone after every test, passed or failed, and after the
// collection that imports the kernel's files under a zone.

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

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("decisions do not depend on the machine's time zone", () => {
  it("reads offset-less dates as UTC, so the fixture's window boundary row is decided the same everywhere", () => {
    vi.stubEnv("TZ", "Asia/Tokyo");
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
    vi.stubEnv("TZ", "UTC");
    const utc = decisionsTable();
    vi.stubEnv("TZ", zone);
    expect(decisionsTable()).toEqual(utc);
  });
});

/** Minutes west of UTC on 2026-01-01 (Date's getTimezoneOffset) in the zones the kernel's tests run again under. */
const OFFSETS: Record<string, number> = { "Asia/Tokyo": -540, "America/Los_Angeles": 480 };

describe("the kernel's tests under other time zones", () => {
  // Not this file: its table sets TZ itself in each test.
  const files = ["./kernel.test.ts", "../integrity/time.test.ts", "../claim/config.test.ts"];

  for (const [zone, offset] of Object.entries(OFFSETS)) {
    // Each file is imported afresh for the zone (its own module under `?zone=`), so its tests are collected here,
    // its top-level code runs in the zone, and each of its tests runs in it too. The modules it tests are this
    // worker's, loaded in the worker's own zone: a zone read once when a module loads goes unseen here (a child
    // process started in the zone would see it); the last block refuses the usual ways of keeping one.
    describe(`TZ=${zone}`, async () => {
      beforeEach(() => {
        vi.stubEnv("TZ", zone);
      });

      it("runs in that zone", () => {
        expect(new Date(2026, 0, 1).getTimezoneOffset()).toBe(offset);
        expect(new Intl.DateTimeFormat().resolvedOptions().timeZone).toBe(zone);
      });

      vi.stubEnv("TZ", zone);
      try {
        for (const file of files) await import(`${file}?zone=${zone}`);
      } finally {
        vi.unstubAllEnvs();
      }
    });
  }
});

/** Every source file of core/ (no tests, no test support), relative to core/. */
function coreSources(dir = new URL("..", import.meta.url).pathname, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(prefix, e.name);
    if (e.isDirectory()) return e.name === "testing" ? [] : coreSources(join(dir, e.name), path);
    return /(?<!\.test|\.test-kit|\.d)\.ts$/.test(e.name) ? [path] : [];
  });
}

describe("core/ reads the machine's zone only when it runs", () => {
  it("makes no Intl.DateTimeFormat and reads no zone offset, which a module could keep from when it loaded", () => {
    const root = new URL("..", import.meta.url);
    const sources = coreSources();
    expect(sources).toContain("kernel/kernel.ts");
    const readers = sources.filter((file) =>
      /Intl\.DateTimeFormat|getTimezoneOffset|resolvedOptions\(\)\.timeZone/.test(
        readFileSync(new URL(file, root), "utf8"),
      ),
    );
    expect(readers, "switching TZ in this process would not reach a zone kept at load").toEqual([]);
  });
});
