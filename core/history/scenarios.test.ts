import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NEEDS_REVIEW_REASON_CODES, idFromLabel, parseScenarioFile } from "./scenarios.ts";
import { SourceFileError } from "../claim/errors.ts";
import type { SourceIssue } from "../claim/yaml-source.ts";

// DIR sample 35's scenario format, from fixtures of our own (scenarios/fixtures/), and the errors a person gets.
const fixture = (name: string) => readFileSync(new URL(`../../scenarios/fixtures/${name}`, import.meta.url), "utf8");
const lineOfText = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

function issuesOf(text: string): SourceIssue[] {
  try {
    parseScenarioFile(text, "s.yaml");
  } catch (e) {
    if (e instanceof SourceFileError) return e.issues;
    throw e;
  }
  throw new Error("expected a SourceFileError");
}

/** One scenario row with a structured claim, in the sample's format. */
const row = (claim: string, expected = "ACCEPT", extra = "") =>
  `scenarios:\n  - label: "SCENARIO A - one"\n    context:\n      claim:\n${claim}\n    expected: ${expected}\n${extra}`;
const CLAIM = "        order_id: ord_001\n        amount_eur: 80.00\n        category: electronics";

describe("parseScenarioFile with DIR sample 35's format", () => {
  it.each([
    ["dir-seed-era.scenarios.yaml", ["G1", "T2", "B3", "F4", "N5", "N6", "W7"]],
    ["roa-dir-v1.scenarios.yaml", ["R1", "R2", "R3", "R4", "R5", "R6"]],
  ])("takes ids from the labels and lists notes once as ignored (%s)", (name, ids) => {
    const file = parseScenarioFile(fixture(name), name);
    expect(file.scenarios.map((s) => s.id)).toEqual(ids);
    expect(file.idsFromLabels).toEqual(ids);
    expect(file.ignored).toEqual([{ path: "scenarios[].notes", why: expect.any(String) }]);
  });

  it("reads structured claims, free text and bare expected verdicts", () => {
    const [first, , , , text] = parseScenarioFile(fixture("dir-seed-era.scenarios.yaml"), "s.yaml").scenarios;
    expect(first).toEqual({
      id: "G1",
      label: "SCENARIO G1 - Garden return within window and limit",
      input: {
        claim: {
          order_id: "ord_101",
          amount_eur: 149.5,
          category: "garden",
          purchase_date: "2026-03-05 09:30:00",
          reason: "Hose splits at the seam",
        },
      },
      expected: { verdict: "ACCEPT" },
    });
    expect(text?.input).toEqual({ claim_text: expect.stringContaining("ord_105 for 60.00 EUR") });
  });

  it.each([
    ["SCENARIO A - Valid: within window & limit", "A"],
    ["scenario b12: lower case", "b12"],
    ["SCENARIO C — em dash", "C"],
    ["SCENARIO D", "D"],
    ["Scenario without an id", undefined],
    ["A - no prefix", undefined],
  ])("idFromLabel(%j) is %j", (label, id) => {
    expect(idFromLabel(label)).toBe(id);
  });

  it("keeps an explicit id over the label", () => {
    const text = row(CLAIM).replace('  - label: "SCENARIO A - one"', '  - id: own\n    label: "SCENARIO A - one"');
    expect(parseScenarioFile(text, "s.yaml")).toMatchObject({ scenarios: [{ id: "own" }], idsFromLabels: [] });
  });

  it("refuses a row whose label names no id, and two rows whose labels name the same one", () => {
    expect(issuesOf(row(CLAIM).replace("SCENARIO A - one", "just a label"))).toEqual([
      expect.objectContaining({ field: "scenarios[0].id", message: expect.stringMatching(/id is missing/) }),
    ]);
    const twice = `${row(CLAIM)}${row(CLAIM).replace("scenarios:\n", "")}`;
    expect(issuesOf(twice)).toEqual([
      expect.objectContaining({ row: "A", message: expect.stringMatching(/duplicate id .*taken from the label/) }),
    ]);
  });
});

describe("scenario errors say what is wrong, where", () => {
  it("says a missing amount_eur is missing (not that context needs claim or claim_text)", () => {
    const text = row("        order_id: ord_001\n        category: electronics");
    expect(issuesOf(text)).toEqual([
      {
        file: "s.yaml",
        line: lineOfText(text, "claim:"),
        row: "A",
        field: "scenarios[0].context.claim.amount_eur",
        message: "amount_eur is missing (required: a number)",
      },
    ]);
  });

  it("says amount: 80,00 inside { } is a number format problem at the claim's line", () => {
    const text =
      'scenarios:\n  - label: "SCENARIO A - one"\n    context:\n      claim: { order_id: ord_001, amount_eur: 80,00, category: electronics }\n    expected: ACCEPT\n';
    const issues = issuesOf(text);
    expect(issues).toEqual([
      expect.objectContaining({
        line: 4,
        field: "scenarios[0].context.claim.amount_eur",
        message: expect.stringMatching(/^80,00 is not a number in YAML .*e\.g\. 80\.00$/),
      }),
    ]);
    expect(issues[0]!.message).not.toMatch(/Unrecognized key/);
  });

  it.each([
    [
      "a block amount with a decimal comma",
      "amount_eur: 80,00",
      /"80,00" is not a number: write amounts with a decimal point, e\.g\. 80\.00/,
    ],
    ["a quoted amount", 'amount_eur: "80.00"', /quoted text: write the number without quotes/],
    ["thousands separators", 'amount_eur: "1,200.00"', /without thousands separators/],
  ])("explains %s", (_name, written, message) => {
    const text = row(CLAIM.replace("amount_eur: 80.00", written));
    expect(issuesOf(text)).toEqual([
      expect.objectContaining({ line: lineOfText(text, "amount_eur"), message: expect.stringMatching(message) }),
    ]);
  });

  it.each([
    [
      "an unknown verdict",
      "ACCPET",
      "scenarios[0].expected.verdict",
      /unknown verdict "ACCPET": expected one of ACCEPT, ESCALATE, REJECT, NEEDS_REVIEW — did you mean ACCEPT\?/,
    ],
    [
      "an unknown reason code",
      "{ verdict: ESCALATE, reason_code: AMOUNT_ABOVE_LIMT }",
      "scenarios[0].expected.reason_code",
      /unknown reason code "AMOUNT_ABOVE_LIMT" — did you mean AMOUNT_ABOVE_LIMIT\?/,
    ],
    [
      "a reason code of another verdict",
      "{ verdict: ACCEPT, reason_code: OUTSIDE_RETURN_WINDOW }",
      "scenarios[0].expected.reason_code",
      /comes with verdict REJECT, not ACCEPT/,
    ],
    [
      "a kernel code for NEEDS_REVIEW",
      "{ verdict: NEEDS_REVIEW, reason_code: ORDER_NOT_FOUND }",
      "scenarios[0].expected.reason_code",
      /kernel reason code/,
    ],
    [
      "an unknown NEEDS_REVIEW code",
      "{ verdict: NEEDS_REVIEW, reason_code: NO_ORDER }",
      "scenarios[0].expected.reason_code",
      /did you mean NO_ORDER_ID\?/,
    ],
  ])("refuses %s in expected, at its line, before anything runs", (_name, expected, field, message) => {
    const text = row(CLAIM, expected);
    expect(issuesOf(text)).toEqual([
      expect.objectContaining({ line: lineOfText(text, "expected:"), field, message: expect.stringMatching(message) }),
    ]);
  });

  it("accepts every reason code a claim can end NEEDS_REVIEW with, and kernel codes with their verdict", () => {
    for (const code of NEEDS_REVIEW_REASON_CODES)
      expect(() =>
        parseScenarioFile(row(CLAIM, `{ verdict: NEEDS_REVIEW, reason_code: ${code} }`), "s.yaml"),
      ).not.toThrow();
    expect(
      parseScenarioFile(row(CLAIM, "{ verdict: REJECT, reason_code: EXCEEDS_REFUNDABLE_BALANCE }"), "s.yaml")
        .scenarios[0]?.expected,
    ).toEqual({ verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE" });
  });

  it.each([
    ["a misspelt row key", row(CLAIM, "ACCEPT", '    note: "x"\n'), "note", /did you mean "notes"\?/],
    [
      "a misspelt context key",
      row(CLAIM).replace("      claim:\n", "      claims:\n"),
      "claims",
      /did you mean "claim"\?/,
    ],
    ["a misspelt claim key", row(CLAIM.replace("category:", "categroy:")), "categroy", /did you mean "category"\?/],
  ])("reports %s at its own line with did-you-mean", (_name, text, key, message) => {
    const issue = issuesOf(text).find((i) => i.field.endsWith(key));
    expect(issue?.line).toBe(lineOfText(text, `${key}:`));
    expect(issue?.message).toMatch(message);
  });
});

describe("review steps: reviewer_max_approval", () => {
  const file = (extra: string) =>
    `scenarios:\n  - id: big\n    label: "big"\n    context:\n      claim: { order_id: ord_002, amount_eur: 1200.0, category: electronics, reason: "x" }\n    expected: ESCALATE\n` +
    `reviews:\n  - id: jr\n    label: "jr"\n    review: { of: big, decision: APPROVE, reviewer: jo }\n${extra}    expected: AWAITING_SECOND_APPROVAL\n`;

  it("gives the step's reviewer their limit as who decides, never in the request's body", () => {
    const [step] = parseScenarioFile(file("    reviewer_max_approval: 200.0\n"), "s.yaml").reviews;
    expect(step?.kind === "review" && step.by).toEqual({ id: "jo", maxApprovalEur: 200 });
    expect(step?.kind === "review" && step.body).toEqual({ decision: "APPROVE", reviewer: "jo" });
    const unlimited = parseScenarioFile(file(""), "s.yaml").reviews[0];
    expect(unlimited?.kind === "review" && unlimited.by).toBeUndefined();
  });

  it.each([
    ["0", /reviewer_max_approval/],
    ["-5", /reviewer_max_approval/],
    ["200.001", /reviewer_max_approval: must be whole cents/],
    ['"lots"', /reviewer_max_approval/],
  ])("refuses reviewer_max_approval %s naming the field", (value, message) => {
    expect(() => parseScenarioFile(file(`    reviewer_max_approval: ${value}\n`), "s.yaml")).toThrow(message);
  });
});

describe("review steps: a payment step and a failed refund's CLOSE", () => {
  const file = (steps: string) =>
    `scenarios:\n  - id: paid\n    label: "paid"\n    context:\n      claim: { order_id: ord_001, amount_eur: 100.0, category: electronics, reason: "x" }\n    expected: ACCEPT\n` +
    `reviews:\n${steps}`;
  const decline = (payment: string, expected = "FAILED", extra = "") =>
    `  - id: declined\n    label: "declined"\n    payment: ${payment}\n${extra}    expected: ${expected}\n`;
  const close = (review: string, expected = "CLOSED") =>
    `  - id: closed\n    label: "closed"\n    review: ${review}\n    expected: ${expected}\n`;

  it("reads a payment step (the provider declines the refund of `of`) and a CLOSE paid out of band, in file order", () => {
    const text = file(
      decline("{ of: paid, declined: card_declined }") +
        close('{ of: paid, decision: CLOSE, paid_out_of_band: true, note: "Bank transfer" }'),
    );
    expect(parseScenarioFile(text, "s.yaml").reviews).toEqual([
      {
        kind: "payment",
        id: "declined",
        label: "declined",
        of: "paid",
        declined: "card_declined",
        offsetMs: 0,
        expected: { outcome: "FAILED" },
      },
      {
        kind: "review",
        id: "closed",
        label: "closed",
        of: "paid",
        body: { decision: "CLOSE", paid_out_of_band: true, note: "Bank transfer" },
        offsetMs: 0,
        expected: { outcome: "CLOSED" },
      },
    ]);
  });

  it.each([
    ["a missing declined", decline("{ of: paid }"), "reviews[0].payment.declined", /declined/],
    [
      "a declined reason that is no reason",
      decline('{ of: paid, declined: "Card Declined!" }'),
      "reviews[0].payment.declined",
      /lower case, digits and _/,
    ],
    [
      "a misspelt payment key",
      decline("{ of: paid, decline: card_declined }"),
      "reviews[0].payment.decline",
      /did you mean "declined"\?/,
    ],
    [
      "a payment of a scenario that does not run before it",
      decline("{ of: nobody, declined: card_declined }"),
      "reviews[0].payment",
      /of: no scenario "nobody" runs before this step \(known: paid\)/,
    ],
    [
      "a payment of a review step (not a scenario)",
      close('{ of: paid, decision: CLOSE, paid_out_of_band: false, note: "n" }') +
        decline("{ of: closed, declined: card_declined }").replace("id: declined", "id: again"),
      "reviews[1].payment",
      /of: no scenario "closed" runs before this step \(known: paid\)/,
    ],
    [
      "a payment step expecting a review's outcome",
      decline("{ of: paid, declined: card_declined }", "APPROVED"),
      "reviews[0].expected",
      /a payment step expects FAILED or REFUSED, not APPROVED/,
    ],
    [
      "a payment step with a reviewer's limit",
      decline("{ of: paid, declined: card_declined }", "FAILED", "    reviewer_max_approval: 200.0\n"),
      "reviews[0].reviewer_max_approval",
      /a payment step has no reviewer/,
    ],
    [
      "a step with both review and payment",
      decline("{ of: paid, declined: card_declined }", "FAILED", "    review: { of: paid, decision: RETRY }\n"),
      "reviews[0].payment",
      /one of review \(a person decides\), payment \(the provider's answer to a refund\), return_event/,
    ],
    [
      "a review step expecting FAILED",
      close('{ of: paid, decision: CLOSE, paid_out_of_band: true, note: "n" }', "FAILED"),
      "reviews[0].expected",
      /FAILED is a payment step's outcome/,
    ],
    [
      "a CLOSE that does not say whether it was paid",
      close('{ of: paid, decision: CLOSE, note: "n" }'),
      "reviews[0].review.paid_out_of_band",
      /a CLOSE says whether the refund was paid out of band/,
    ],
    [
      "paid_out_of_band on an APPROVE",
      close("{ of: paid, decision: APPROVE, paid_out_of_band: true }", "APPROVED"),
      "reviews[0].review.paid_out_of_band",
      /paid_out_of_band is only for CLOSE/,
    ],
  ])("refuses %s, naming the field", (_name, steps, field, message) => {
    const text = file(steps);
    const issue = issuesOf(text).find((i) => i.field === field);
    expect(issue, JSON.stringify(issuesOf(text))).toBeDefined();
    expect(issue?.message).toMatch(message);
  });
});

describe("return steps: a return event and the sweep, on a steps' clock that only moves forward", () => {
  const file = (steps: string) =>
    `scenarios:\n  - id: back\n    label: "back"\n    context:\n      claim: { order_id: ord_050, amount_eur: 280.0, category: sports, reason: "x" }\n    expected: { verdict: ACCEPT, executed: false }\n` +
    `reviews:\n${steps}`;
  const step = (id: string, body: string, expected: string, at?: string) =>
    `  - id: ${id}\n    label: "${id}"\n${at ? `    at: "${at}"\n` : ""}    ${body}\n    expected: ${expected}\n`;

  it("reads return events (the step's id as event_id unless one is given) and a sweep, each at its offset from the run's clock", () => {
    const parsed = parseScenarioFile(
      file(
        step("shipped", "return_event: { of: back, event: in_transit, carrier_ref: C1 }", "WAIT", "+1d") +
          step(
            "again",
            "return_event: { of: back, event: in_transit, event_id: shipped, carrier_ref: C1 }",
            "RECORDED",
          ) +
          step("deny", "review: { of: back, decision: DENY }", "DENIED", "+36h") +
          step("due", "sweep: { of: back }", "NOT_RECEIVED", "+31d"),
      ),
      "s.yaml",
    );
    expect(parsed.scenarios[0]!.expected).toEqual({ verdict: "ACCEPT", executed: false });
    expect(parsed.reviews.map((r) => [r.kind, r.id, r.offsetMs, "body" in r ? r.body : undefined])).toEqual([
      ["return_event", "shipped", 86_400_000, { event_id: "shipped", event: "in_transit", carrier_ref: "C1" }],
      ["return_event", "again", 86_400_000, { event_id: "shipped", event: "in_transit", carrier_ref: "C1" }],
      ["review", "deny", 129_600_000, { decision: "DENY" }],
      ["sweep", "due", 31 * 86_400_000, undefined],
    ]);
  });

  it.each([
    [
      "a clock moved back",
      step("late", "sweep: { of: back }", "WAIT", "+2d") + step("early", "sweep: { of: back }", "WAIT", "+1d"),
      "reviews[1].at",
      /before the step before it \(48 h after the run's clock\): the steps' clock only moves forward/,
    ],
    [
      "an offset back",
      step("back1", "sweep: { of: back }", "WAIT", "-1d"),
      "reviews[0].at",
      /offset from the run's clock such as \+3d/,
    ],
    [
      "a sweep expecting a review's outcome",
      step("s", "sweep: { of: back }", "APPROVED"),
      "reviews[0].expected",
      /a sweep step expects NOT_RECEIVED, PAY, REVIEW or WAIT, not APPROVED/,
    ],
    [
      "an unknown return event",
      step("e", "return_event: { of: back, event: lost }", "WAIT"),
      "reviews[0].return_event.event",
      /in_transit/,
    ],
    [
      "a return event for a scenario that does not run before it",
      step("e", "return_event: { of: nobody, event: delivered }", "PAY"),
      "reviews[0].return_event",
      /no scenario "nobody" runs before this step \(known: back\)/,
    ],
    [
      "a return step with a reviewer's limit",
      `  - id: r\n    label: "r"\n    return_event: { of: back, event: delivered }\n    reviewer_max_approval: 100\n    expected: PAY\n`,
      "reviews[0].reviewer_max_approval",
      /a return_event step has no reviewer/,
    ],
  ])("refuses %s, naming the field", (_what, steps, field, message) => {
    const issues = issuesOf(file(steps));
    const issue = issues.find((i) => i.field === field);
    expect(issue, JSON.stringify(issues)).toBeDefined();
    expect(issue?.message).toMatch(message);
  });
});
