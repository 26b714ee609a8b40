// Redaction changes no decision (docs/privacy.md): every bundled and seed scenario, with a customer's personal data
// written into its text, is read and proposed by the rules model — which sees only the prompt's redacted facts —
// exactly as without it, and none of that personal data is in any prompt.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { analystMessages, decisionMakerMessages, extractionMessages } from "../agents/prompts.ts";
import { createRulesModel } from "../agents/rules-model.ts";
import type { Claim } from "../claim/claim.ts";
import { claimFromExtraction } from "../extraction/extraction.ts";
import { testContract, testResponsibility } from "../kernel/contract.test-kit.ts";
import type { ClaimExtractionOutput } from "../claim/proposal-output.ts";
import { parseScenarioFile, renderClaimText } from "./scenarios.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const ctx = { receivedAt: new Date(NOW).toISOString(), responsibility: testResponsibility };
const model = createRulesModel({ contract: testContract, responsibility: testResponsibility });
const PERSONAL = [
  "Anna Schmidt",
  "anna.schmidt@example.de",
  "+49 171 2345678",
  "Hauptstraße 12, 10115 Berlin",
  "DE89 3704 0044 0532 0130 00",
  "4111 1111 1111 1111",
];
const withPersonalData = (text: string) =>
  `My name is ${PERSONAL[0]} (${PERSONAL[1]}, ${PERSONAL[2]}), ${PERSONAL[3]}.\n${text}\n` +
  `Refund to ${PERSONAL[4]}, not to the card ${PERSONAL[5]}. Kind regards, ${PERSONAL[0]}`;

const files = [
  "scenarios/scenarios.yaml",
  "scenarios/fixtures/dir-seed-era.scenarios.yaml",
  "scenarios/fixtures/roa-dir-v1.scenarios.yaml",
];
const scenarios = files.flatMap((f) => {
  const parsed = parseScenarioFile(readFileSync(new URL(`../../${f}`, import.meta.url), "utf8"), f);
  return [...parsed.scenarios, ...parsed.afterReviews].map((s) => ({ ...s, file: f }));
});

async function extract(text: string) {
  const request = extractionMessages(text, ctx);
  const answer = await model.complete(request);
  if (!answer.ok) throw new Error(answer.message);
  const read = claimFromExtraction(answer.value as ClaimExtractionOutput, { text, now: NOW });
  return { request, read: read.ok ? { ...read.claim, reason: undefined } : { code: read.code } };
}

async function propose(claim: Claim) {
  const analystRequest = analystMessages(claim, testContract, ctx);
  const analysis = await model.complete(analystRequest);
  if (!analysis.ok) throw new Error(analysis.message);
  const request = decisionMakerMessages(String(analysis.value), claim, testContract, ctx);
  const answer = await model.complete(request);
  if (!answer.ok) throw new Error(answer.message);
  const { reason: _reason, ...proposal } = answer.value as Record<string, unknown>;
  return { requests: [analystRequest, request], proposal };
}

describe("redaction changes no decision", () => {
  it("covers free-text and structured scenarios", () => {
    expect(scenarios.filter((s) => "claim_text" in s.input).length).toBeGreaterThan(3);
    expect(scenarios.filter((s) => "claim" in s.input).length).toBeGreaterThan(20);
  });

  it.each(scenarios.map((s) => [`${s.file} ${s.id}`, s] as const))("%s", async (_name, s) => {
    if ("claim_text" in s.input) {
      const text = renderClaimText(s.input.claim_text, NOW);
      const plain = await extract(text);
      const personal = await extract(withPersonalData(text));
      expect(personal.read).toEqual(plain.read);
      for (const value of PERSONAL) expect(JSON.stringify(personal.request)).not.toContain(value);
      return;
    }
    const claim = s.input.claim;
    const plain = await propose(claim);
    const personal = await propose({ ...claim, reason: withPersonalData(claim.reason) });
    expect(personal.proposal).toEqual(plain.proposal);
    for (const value of PERSONAL) expect(JSON.stringify(personal.requests)).not.toContain(value);
  });
});
