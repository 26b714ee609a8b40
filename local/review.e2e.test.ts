// End to end over HTTP against `claims serve` (a child process): 100 claims at once on one order, then the
// reviews they opened decided at once by two reviewers who disagree. Money stays bounded throughout: automatic
// refunds on the order never pass the 500 EUR limit, nothing refunds above the order or twice, every ACCEPT
// has its RefundExecuted and every RefundExecuted an ACCEPT or an approval; each review is decided once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokenSha256 } from "../functions/http/bearer.ts";
import { writeReviewers } from "./auth/reviewers.ts";
import { checkMoneyInvariants, fromJournal } from "../pipeline/testing/money-invariants.ts";
import { finalClaims, startServe } from "./serve-child.test-kit.ts";
import type { ServeChild } from "./serve-child.test-kit.ts";
import { TEST_NOW } from "./testing/stack-fixture.ts";

// ord_016 in scenarios/config.yaml: 1200 EUR; the escalation limit is 500 EUR.
const ORDER = { id: "ord_016", eur: 1200 };
const CLAIMS = 100;
const AMOUNT = 100;

let dataDir: string;
let serve: ServeChild;

// Three named reviewers (the reviewers file): a desk that lists and approves, alice and bob who disagree.
const TOKENS = {
  desk: randomBytes(16).toString("hex"),
  alice: randomBytes(16).toString("hex"),
  bob: randomBytes(16).toString("hex"),
};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "claims-review-e2e-"));
  const file = join(dataDir, "reviewers.yaml");
  writeReviewers(
    file,
    Object.entries(TOKENS).map(([id, token]) => ({ id, token_sha256: tokenSha256(token) })),
  );
  serve = await startServe({
    dataDir,
    reviewerToken: TOKENS.desk,
    args: ["--now", new Date(TEST_NOW).toISOString(), "--reviewers", file],
  });
}, 120_000);

afterAll(async () => {
  await serve?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("reviews over HTTP", () => {
  const ids: string[] = [];
  /** The claims the first case saw final as ESCALATE (the reviews the next cases list and decide). */
  const escalatedIds: string[] = [];

  it(`decides ${CLAIMS} claims submitted at once on one order without ever passing the automatic limit`, async () => {
    const submitted = await Promise.all(
      Array.from({ length: CLAIMS }, (_, i) =>
        serve.api(
          "POST",
          "/claims",
          { claim: { order_id: ORDER.id, amount_eur: AMOUNT, category: "electronics", reason: `part ${i} broke` } },
          { headers: { "idempotency-key": `e2e-review-${i}` } },
        ),
      ),
    );
    for (const s of submitted) {
      expect(s.status).toBe(202);
      ids.push(s.body.claim_id);
    }
    const views = await finalClaims(serve, ids);
    const accepted = views.filter((v) => v.verdict === "ACCEPT");
    const escalated = views.filter((v) => v.verdict === "ESCALATE");
    escalatedIds.push(...escalated.map((v) => String(v.claim_id)));
    expect(accepted.length + escalated.length).toBe(CLAIMS);
    // 5 × 100 EUR reach the 500 EUR limit exactly; everything else waits for a person.
    expect(accepted.length).toBeLessThanOrEqual(500 / AMOUNT);
    expect(accepted.every((v) => v.executed === true && v.customer_message === "Your refund has been approved.")).toBe(
      true,
    );
    expect(
      escalated.every(
        (v) =>
          ["AMOUNT_ABOVE_LIMIT", "REVIEW_PENDING_ON_ORDER"].includes(String(v.reason_code)) &&
          (v.review as { status: string }).status === "PENDING",
      ),
    ).toBe(true);
    const money = checkMoneyInvariants(fromJournal(serve.events()), {
      orderAmountEur: (id) => (id === ORDER.id ? ORDER.eur : undefined),
      limitEur: 500,
    });
    expect(money.violations).toEqual([]);
    expect(money.accepts).toBe(accepted.length);
    expect(money.refunds).toBe(accepted.length);
  }, 600_000);

  it("lists the pending reviews oldest first to the reviewer token only", async () => {
    const intake = await serve.api("GET", "/reviews");
    expect(intake.status).toBe(403);
    const pages: { review_id: string; claim_id: string; requested_at: string; status: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = await serve.api(
        "GET",
        `/reviews?limit=30${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        undefined,
        { as: "reviewer" },
      );
      expect(page.status).toBe(200);
      pages.push(...page.body.items);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(escalatedIds.length).toBeGreaterThan(0);
    expect(pages.map((r) => r.claim_id).sort()).toEqual([...escalatedIds].sort());
    expect(pages.every((r) => r.status === "PENDING")).toBe(true);
    const times = pages.map((r) => r.requested_at);
    expect(times).toEqual([...times].sort());
    // A cursor no page gave, or a parameter the route does not take, is refused naming it (as GET /claims does).
    for (const [query, path] of [
      ["cursor=garbage", "cursor"],
      ["limit=5&order=desc", "order"],
    ]) {
      const bad = await serve.api("GET", `/reviews?${query}`, undefined, { as: "reviewer" });
      expect(bad.status, query).toBe(400);
      expect(bad.body.error).toMatchObject({ code: "INVALID_QUERY", issues: [{ path }] });
    }
  }, 300_000); // a GET of each of the 100 claims and the pages: over 30 s at load 10

  it("decides every review exactly once when two reviewer desks act at once, and approves only what the order can still refund", async () => {
    const pending = (await serve.api("GET", "/reviews?limit=200", undefined, { as: "reviewer" })).body.items as {
      claim_id: string;
    }[];
    const decide = (claim: string, body: Record<string, unknown>, desk: string) =>
      serve
        .api("POST", `/claims/${claim}/review`, body, {
          token: desk === "alice" || desk === "bob" ? TOKENS[desk] : TOKENS.desk,
        })
        .then((a) => ({ desk, claim, ...a }));
    // Round 1: two desks approve every review at once with the same decision (a duplicated request, as a retry sends it).
    const approveAll = { decision: "APPROVE", reviewer: "desk" };
    let round1 = await Promise.all(
      pending.flatMap((r) => [decide(r.claim_id, approveAll, "d1"), decide(r.claim_id, approveAll, "d2")]),
    );
    // Approvals racing on one order are decided one after the other (four eyes per order); one that lost the race
    // three times is answered 409 APPROVALS_CHANGED (or REVIEW_CHANGED, when the other desk's same approval also
    // moved the review), "try again" (docs/reviews.md) — as a desk would, it is sent again.
    const tryAgain = (a: { body?: { error?: { code?: string } } }) =>
      ["APPROVALS_CHANGED", "REVIEW_CHANGED"].includes(a.body?.error?.code ?? "");
    for (let again = 0; again < 20 && round1.some(tryAgain); again++) {
      const retried = await Promise.all(round1.map((a) => (tryAgain(a) ? decide(a.claim, approveAll, a.desk) : a)));
      round1 = retried;
    }
    expect(round1.every((a) => [200, 409].includes(a.status))).toBe(true);
    // 500 EUR were refunded automatically; the 700 EUR left pay exactly 7 approvals of 100 EUR, the rest are refused.
    const approved = new Set(round1.filter((a) => a.status === 200).map((a) => a.claim));
    expect(approved.size).toBe((ORDER.eur - 500) / AMOUNT);
    for (const a of round1.filter((x) => x.status === 409))
      expect(a.body.error.code).toBe("EXCEEDS_REFUNDABLE_BALANCE");
    // Round 2: one desk denies what is left while the other tries to approve it again; each review is decided once.
    const left = pending.filter((r) => !approved.has(r.claim_id));
    const round2 = await Promise.all(
      left.flatMap((r) => [
        decide(r.claim_id, { decision: "DENY", reviewer: "alice", note: "duplicate part claims" }, "alice"),
        decide(r.claim_id, { decision: "APPROVE", reviewer: "bob" }, "bob"),
      ]),
    );
    for (const r of left) {
      const answers = round2.filter((a) => a.claim === r.claim_id);
      expect(answers.find((a) => a.desk === "alice")?.status, r.claim_id).toBe(200);
      expect(answers.find((a) => a.desk === "bob")?.status, r.claim_id).toBe(409);
    }
    const views = await Promise.all(pending.map((r) => serve.api("GET", `/claims/${r.claim_id}`)));
    expect(views.filter((v) => v.body.review.status === "APPROVED").length).toBe(approved.size);
    expect(views.filter((v) => v.body.review.status === "DENIED").length).toBe(left.length);
    expect(
      views
        .filter((v) => v.body.review.status === "APPROVED")
        .every((v) => v.body.executed === true && v.body.customer_message === "Your refund has been approved."),
    ).toBe(true);
    const money = checkMoneyInvariants(fromJournal(serve.events()), {
      orderAmountEur: (id) => (id === ORDER.id ? ORDER.eur : undefined),
      limitEur: 500,
    });
    expect(money.violations).toEqual([]);
    expect(money.approvedRefunds).toBe(approved.size);
    expect(money.refundedCents).toBe(ORDER.eur * 100);
    // Each review announced one decision (repeats of a request are at-least-once copies of the same event).
    const decided = serve.events().filter((e) => e["detail-type"] === "ReviewDecided");
    const perReview = new Map<string, Set<string>>();
    for (const e of decided)
      perReview.set(
        String(e.detail.review_id),
        new Set([...(perReview.get(String(e.detail.review_id)) ?? []), String(e.detail.decision)]),
      );
    expect(perReview.size).toBe(pending.length);
    expect([...perReview.values()].every((s) => s.size === 1)).toBe(true);
    // The recorded reviewer is the credential's: the desk approved, alice denied; the refunds name their approver.
    expect(new Set(decided.map((e) => `${String(e.detail.decision)} ${String(e.detail.reviewer)}`))).toEqual(
      new Set(["APPROVE desk", "DENY alice"]),
    );
    const approvers = serve.events().filter((e) => e["detail-type"] === "RefundExecuted" && e.detail.approved_by);
    expect(new Set(approvers.map((e) => e.detail.approved_by))).toEqual(new Set(["desk"]));
  }, 600_000);

  it("repeats a decision idempotently and refuses a different one with 409 naming the stored decision, storing nothing", async () => {
    const decidedOne = (await serve.api("GET", "/reviews?status=DENIED&limit=1", undefined, { as: "reviewer" })).body
      .items[0] as { claim_id: string } | undefined;
    expect(decidedOne).toBeDefined();
    const again = await serve.api(
      "POST",
      `/claims/${decidedOne!.claim_id}/review`,
      { decision: "DENY", reviewer: "alice", note: "duplicate part claims" },
      { token: TOKENS.alice },
    );
    expect(again.status).toBe(200);
    expect(again.body.review.status).toBe("DENIED");
    const other = await serve.api(
      "POST",
      `/claims/${decidedOne!.claim_id}/review`,
      { decision: "APPROVE", reviewer: "bob" },
      { token: TOKENS.bob },
    );
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: "REVIEW_ALREADY_DECIDED",
      message: expect.stringContaining("DENY"),
    });
    expect((await serve.api("POST", "/claims/clm_nope/review", { decision: "DENY" }, { as: "reviewer" })).status).toBe(
      404,
    );
    expect(
      (
        await serve.api(
          "POST",
          `/claims/${decidedOne!.claim_id}/review`,
          { decision: "APPROVE", amount_eur: -5 },
          { as: "reviewer" },
        )
      ).status,
    ).toBe(409);
    expect(
      (await serve.api("POST", `/claims/${ids[0]}/review`, { decision: "MAYBE" }, { as: "reviewer" })).status,
    ).toBe(400);
    expect((await serve.api("POST", `/claims/${ids[0]}/review`, { decision: "DENY" })).status).toBe(403);
  });

  it("records the credential's reviewer: a body naming someone else is 400 REVIEWER_MISMATCH, an unknown token 403", async () => {
    const pendingOne = await serve.api("GET", "/reviews?status=DENIED&limit=1", undefined, { token: TOKENS.bob });
    expect(pendingOne.status).toBe(200);
    const claim = ids[0]!;
    const posing = await serve.api(
      "POST",
      `/claims/${claim}/review`,
      { decision: "DENY", note: "n", reviewer: "alice" },
      { token: TOKENS.bob },
    );
    expect(posing.status).toBe(400);
    expect(posing.body.error.code).toBe("REVIEWER_MISMATCH");
    expect((await serve.api("GET", "/reviews", undefined, { token: "not-a-reviewer-token-at-all" })).status).toBe(403);
    expect(serve.stdout()).toContain("reviewers 3 named in");
  });

  it("takes a change of the reviewers file without a restart: a removed reviewer's token is refused within a few seconds", async () => {
    const file = join(dataDir, "reviewers.yaml");
    expect((await serve.api("GET", "/reviews?limit=1", undefined, { token: TOKENS.bob })).status).toBe(200);
    writeReviewers(
      file,
      Object.entries(TOKENS)
        .filter(([id]) => id !== "bob")
        .map(([id, token]) => ({ id, token_sha256: tokenSha256(token) })),
    );
    // Polled up to a generous limit (a loaded machine): the server looks at the file again at most every second.
    let status = 200;
    for (let i = 0; i < 100 && status !== 403; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await serve.api("GET", "/reviews?limit=1", undefined, { token: TOKENS.bob })).status;
    }
    expect(status).toBe(403);
    expect((await serve.api("GET", "/reviews?limit=1", undefined, { token: TOKENS.alice })).status).toBe(200);
  });
});
