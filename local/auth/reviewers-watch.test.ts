// A running server's reviewers (docs/reviews.md): the reviewers file read again on use, at most every second, so a
// change takes effect without a restart; a file that cannot be used refuses everyone until it can.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tokenSha256 } from "../../functions/http/bearer.ts";
import { watchReviewers, writeReviewers } from "./reviewers.ts";

const dir = mkdtempSync(join(tmpdir(), "claims-reviewers-watch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ALICE = { id: "alice", token_sha256: tokenSha256("alice-token") };
const BOB = { id: "bob", token_sha256: tokenSha256("bob-token") };

describe("watchReviewers", () => {
  it("reads the file again once the recheck interval has passed, and only then", () => {
    const file = join(dir, "team.yaml");
    writeReviewers(file, [ALICE, BOB]);
    let now = 0;
    const reviewers = watchReviewers(file, { now: () => now, recheckMs: 1000 });
    expect(reviewers().map((r) => r.id)).toEqual(["alice", "bob"]);
    writeReviewers(file, [ALICE]);
    now += 999;
    expect(reviewers().map((r) => r.id)).toEqual(["alice", "bob"]);
    now += 1;
    expect(reviewers().map((r) => r.id)).toEqual(["alice"]);
  });

  it("refuses every reviewer while the file cannot be used, says why once, and recovers", () => {
    const file = join(dir, "edited.yaml");
    writeReviewers(file, [ALICE, BOB]);
    let now = 0;
    const problems: string[] = [];
    const reviewers = watchReviewers(file, { now: () => now, recheckMs: 10, onProblem: (m) => problems.push(m) });
    expect(reviewers()).toHaveLength(2);
    writeFileSync(file, "reviewers:\n  - id: alice\n   token_sha256: [\n", { mode: 0o600 });
    now += 10;
    expect(reviewers()).toEqual([]);
    now += 10;
    expect(reviewers()).toEqual([]);
    expect(problems).toEqual([expect.stringMatching(/cannot be used, so every reviewer is refused until it can/)]);
    rmSync(file);
    now += 10;
    expect(reviewers()).toEqual([]);
    expect(problems[1]).toMatch(/does not exist/);
    writeReviewers(file, [BOB]);
    now += 10;
    expect(reviewers().map((r) => r.id)).toEqual(["bob"]);
  });
});
