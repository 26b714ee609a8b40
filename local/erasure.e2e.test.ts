// Issue 38's Done-when on the local stack (docs/customer-data.md): `claims serve` takes a customer's claims that end
// refunded automatically, rejected, reviewed (a person approved, with a note quoting them), and two still held at a
// review (one of them a free-text claim with their IBAN, which the rules model escalates); `claims export` lists them; `claims erase --customer` runs against the
// RUNNING server; the held claim is then decided by a person (its decision unbroken); after the server stops, no
// byte of the data directory holds the customer's words — raw bytes of every file (LevelDB's included) and every
// compressed attribute of every item inflated — while another customer's words still open, and every erased claim
// replays IDENTICAL on the decision. Erasing again, or an unknown customer, answers clearly. The `claims` commands
// beside the server run in this process (the server is the child): 16 child processes fewer (issue 36).
import { inflateRawSync, gunzipSync } from "node:zlib";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { COMPACT_DICTIONARIES } from "../adapters/aws/compact.ts";
import { sweepServedRetention } from "../cli/customer-data-served.ts";
import { claimsInProcess } from "../cli/cli-in-process.test-kit.ts";
import { finalClaim, startServe } from "./serve-child.test-kit.ts";
import type { ServeChild } from "./serve-child.test-kit.ts";

const ROOT = new URL("../", import.meta.url).pathname;
/** Zelda's words: none may survive her erasure anywhere in the data directory. */
const ZELDA = [
  "Zelda Quirinius",
  "Quirinius",
  "zelda.quirinius@example.com",
  "+49 171 9876543",
  "DE89370400440532013000",
];
const KARL = "Karl Keepmann";

const work = mkdtempSync(join(tmpdir(), "claims-erasure-e2e-"));
const dataDir = join(work, "data");
const configPath = join(work, "config.yaml");
writeFileSync(
  configPath,
  readFileSync(join(ROOT, "scenarios/config.yaml"), "utf8")
    .trimEnd()
    .concat(`
    ord_z1: { purchase_date: "-3d",  category: electronics, amount: 80.00,   customer_id: cus_zelda }
    ord_z2: { purchase_date: "-3d",  category: electronics, amount: 900.00,  customer_id: cus_zelda }
    ord_z3: { purchase_date: "-60d", category: electronics, amount: 90.00,   customer_id: cus_zelda }
    ord_z4: { purchase_date: "-3d",  category: electronics, amount: 950.00,  customer_id: cus_zelda }
    ord_z5: { purchase_date: "-3d",  category: electronics, amount: 45.00,   customer_id: cus_zelda }
    ord_k1: { purchase_date: "-3d",  category: electronics, amount: 30.00,   customer_id: cus_karl }
    ord_m1: { purchase_date: "-3d",  category: electronics, amount: 20.00,   customer_id: cus_mallory }
    ord_m2: { purchase_date: "-3d",  category: electronics, amount: 25.00,   customer_id: cus_mallory }
`),
);
let serve: ServeChild | undefined;
afterAll(async () => {
  await serve?.stop();
  if (!process.env.KEEP_ERASURE_DIR) rmSync(work, { recursive: true, force: true });
  else console.log("WORK", work);
});

/** `claims ARGS` beside the running server, in this process (cli/cli-in-process.test-kit.ts): the commands' own
 * runs and exit codes; cli/customer-data.test.ts runs `claims erase` and `export` as binaries. */
const claims = (args: string[]) => claimsInProcess(args, { LLM_PROVIDER: "rules" });

const claim = (order: string, amount: number, customer: string, reason: string) => ({
  claim: { order_id: order, amount_eur: amount, category: "electronics", customer_id: customer, reason },
});

/** Every file under `dir`. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

/** Every text a file holds: its raw bytes, and each binary attribute DynamoDB's files keep (base64) inflated as the table's ports would. */
function textsOf(path: string): Buffer[] {
  const raw = readFileSync(path);
  const out = [raw];
  for (const m of raw.toString("latin1").matchAll(/"B":"([A-Za-z0-9+/=]+)"/g)) {
    const bin = Buffer.from(m[1]!, "base64");
    // Every codec that inflates the bytes (a raw deflate inflates with another dictionary too, into other bytes).
    for (const inflate of [
      ...Object.values(COMPACT_DICTIONARIES).map((dictionary) => () => inflateRawSync(bin, { dictionary })),
      () => gunzipSync(bin),
      () => inflateRawSync(bin),
    ])
      try {
        out.push(inflate());
      } catch {
        // not this codec
      }
  }
  return out;
}

/** The files of the data directory holding one of `words`, as `file: word`. */
function holding(words: readonly string[]): string[] {
  return files(dataDir).flatMap((f) => {
    const texts = textsOf(f);
    return words.filter((w) => texts.some((t) => t.includes(w))).map((w) => `${f.slice(dataDir.length)}: ${w}`);
  });
}

describe("a customer's erasure on claims serve", () => {
  it("leaves none of their words in any byte the stack keeps, decisions replay IDENTICAL, the held claim decided after", async () => {
    serve = await startServe({ dataDir, args: ["--config", configPath] });
    const s = serve;
    const submit = async (body: unknown) => {
      const res = await s.api("POST", "/claims", body);
      expect(res.status).toBe(202);
      return res.body.claim_id as string;
    };
    const refunded = await submit(
      claim("ord_z1", 80, "cus_zelda", "Kettle leaks. Zelda Quirinius, zelda.quirinius@example.com"),
    );
    const reviewed = await submit(
      claim("ord_z2", 900, "cus_zelda", "Laptop dead, call Zelda Quirinius on +49 171 9876543"),
    );
    const rejected = await submit(claim("ord_z3", 90, "cus_zelda", "Too late, I know. Zelda Quirinius"));
    const held = await submit(
      claim("ord_z4", 950, "cus_zelda", "Screen cracked. Quirinius, IBAN DE89370400440532013000"),
    );
    const freeText = await submit({
      claim_text: "I bought order ord_z5 for 45 EUR and it broke. Zelda Quirinius, IBAN DE89370400440532013000",
    });
    const karl = await submit(claim("ord_k1", 30, "cus_karl", `Lamp flickers. ${KARL}`));
    // A customer whose reasons read like sealed fields: a prefix, and a full token forged on one of Zelda's claims.
    const forged = `pd1:${Buffer.from(refunded).toString("base64url")}:${"A".repeat(16)}:AAAA:${"A".repeat(22)}`;
    const mallory = [
      await submit(claim("ord_m1", 20, "cus_mallory", "pd1:abc")),
      await submit(claim("ord_m2", 25, "cus_mallory", forged)),
    ];
    /** Mallory's export: everything held about her, opened (the fields that read erased named). */
    const malloryExport = async () => {
      const out = await claims(["export", "--customer", "cus_mallory", "--data-dir", dataDir]);
      expect(out.code).toBe(0);
      const { exported_at: _at, ...held } = JSON.parse(out.stdout) as Record<string, unknown>;
      return JSON.stringify(held);
    };
    const zelda = [refunded, reviewed, rejected, held, freeText];
    const final = Object.fromEntries(
      await Promise.all([...zelda, karl].map(async (id) => [id, await finalClaim(s, id)])),
    );
    expect([refunded, reviewed, rejected, held, freeText, karl].map((id) => final[id]!.verdict)).toEqual([
      "ACCEPT",
      "ESCALATE",
      "REJECT",
      "ESCALATE",
      "ESCALATE",
      "ACCEPT",
    ]);
    const approval = await s.api(
      "POST",
      `/claims/${reviewed}/review`,
      { decision: "APPROVE", note: "Zelda Quirinius confirmed on +49 171 9876543" },
      { as: "reviewer" },
    );
    expect(approval.body).toMatchObject({ executed: true });
    expect(approval.body.executed).toBe(true);

    for (const id of mallory) expect((await finalClaim(s, id)).verdict).toBe("ACCEPT");
    const malloryBefore = await malloryExport();
    expect(malloryBefore).toContain('"pd1:abc"');
    expect(malloryBefore).toContain(`"${forged}"`);
    expect(malloryBefore).not.toContain("[erased]");

    // Access: everything held about her, opened, through the running server.
    const exported = await claims(["export", "--customer", "cus_zelda", "--data-dir", dataDir]);
    expect(exported.code).toBe(0);
    const before = JSON.parse(exported.stdout) as { claims: { claim_id: string; erased: boolean }[] };
    expect(before.claims.map((c) => c.claim_id).sort()).toEqual([...zelda].sort());
    expect(before.claims.every((c) => !c.erased)).toBe(true);
    expect(exported.stdout).toContain("Zelda Quirinius");
    const replayedBefore = await Promise.all(zelda.map((id) => claims(["replay", id, "--data-dir", dataDir])));
    for (const r of replayedBefore) expect(r.stdout).toMatch(/Identical: /);

    // Erasure against the running server: the held claim is said to be in flight.
    const erased = await claims(["erase", "--customer", "cus_zelda", "--data-dir", dataDir]);
    expect(erased).toMatchObject({ code: 0, stdout: expect.stringContaining("personal data of 5 claim(s) erased") });
    expect(erased.stdout).toContain(`${held} (served): erased; in flight`);
    expect(await claims(["erase", "--customer", "cus_zelda", "--data-dir", dataDir])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("already erased (5 claim(s))"),
    });
    const unknown = await claims(["erase", "--customer", "cus_nobody", "--data-dir", dataDir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no claim of customer cus_nobody");
    expect(unknown.stderr).not.toMatch(/\n\s+at /);

    // The held claim goes on: a person decides it after the erasure, quoting her again — stored erased.
    const view = await s.api("GET", `/claims/${held}`);
    expect(JSON.stringify(view.body)).not.toContain("Quirinius");
    const denial = await s.api(
      "POST",
      `/claims/${held}/review`,
      { decision: "DENY", note: "Zelda Quirinius has no case" },
      { as: "reviewer" },
    );
    expect(denial.status).toBe(200);
    expect((await s.api("GET", `/claims/${held}`)).body.review.status).toBe("DENIED");
    // Mallory's reasons read as written still: the token forged on Zelda's erased claim is Mallory's text, not erased.
    expect(await malloryExport()).toBe(malloryBefore);
    expect(await s.stop()).toBe(0);
    serve = undefined;

    // Every byte kept: none of her words; Karl's still open from the files.
    expect(holding(ZELDA)).toEqual([]);
    const karlExport = await claims(["export", "--customer", "cus_karl", "--data-dir", dataDir]);
    expect(karlExport.stdout).toContain(KARL);
    // The retention policy over the served claims (serve's sweep runs it): a day past Karl's claim, his words go too.
    const retained = await sweepServedRetention(dataDir, 1, new Date(Date.now() + 2 * 86_400_000));
    expect(retained?.claims.find((c) => c.claim_id === karl)).toMatchObject({ outcome: "destroyed", in_flight: false });
    expect(holding([KARL])).toEqual([]);
    // Her decisions stay provable from the files, the erased fields named.
    for (const [i, id] of zelda.entries()) {
      const after = await claims(["replay", id, "--data-dir", dataDir]);
      expect(after.stdout).toContain("personal data erased");
      if (id !== held)
        expect(after.stdout.match(/Identical: .*/)?.[0]).toBe(replayedBefore[i]!.stdout.match(/Identical: .*/)?.[0]);
      else expect(after.stdout).toMatch(/Identical: /);
    }
  }, 600_000);
});
