// Named reviewers from the terminal, through the CLI's program (the first `reviewers add` as a user runs it, a child
// process of bin/claims.mjs; the rest in the test's process, cli/cli-in-process.test-kit.ts): the reviewers file
// `claims reviewers add|list|remove` writes (owner-only, a token printed once, only its hash kept), `claims serve`
// refusing a bad file whole with the line, and `claims review` finding the running server through the data
// directory (exit 2 when nothing answers).
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parseReviewers } from "../local/auth/reviewers.ts";
import { claimsInProcess } from "./cli-in-process.test-kit.ts";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "bin/claims.mjs");
const dir = mkdtempSync(join(tmpdir(), "claims-reviewers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `claims ARGS` in this process, with the variables the child gets below. */
function claims(args: string[], env: Record<string, string> = {}) {
  return claimsInProcess(args, { LLM_PROVIDER: "rules", CLAIMS_URL: "", ...env });
}

/** `claims ARGS` as a user runs it: a child process of bin/claims.mjs. */
async function claimsBinary(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1", LLM_PROVIDER: "rules", CLAIMS_URL: "", ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const sha = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");
const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);

describe("claims reviewers add|list|remove", () => {
  it("adds a reviewer with a token printed once, keeps only its SHA-256 in an owner-only file, lists and removes", async () => {
    const file = join(dir, "team.yaml");
    const added = await claimsBinary(["reviewers", "add", "alice", "--name", "Alice Martin", "--reviewers", file]);
    expect(added.code, added.stderr).toBe(0);
    const token = /token \(shown once[^)]*\): (\S+)/.exec(added.stdout)?.[1];
    expect(token).toBeDefined();
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(token!);
    expect(parseReviewers(text, file)).toEqual([{ id: "alice", name: "Alice Martin", token_sha256: sha(token!) }]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await claims(["reviewers", "add", "bob"], { CLAIMS_REVIEWERS_FILE: file })).code).toBe(0);
    const again = await claims(["reviewers", "add", "alice", "--reviewers", file]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/reviewer alice is already in/);
    expect((await claims(["reviewers", "list", "--reviewers", file])).stdout).toBe("alice\tAlice Martin\nbob\n");
    expect((await claims(["reviewers", "remove", "bob", "--reviewers", file])).code).toBe(0);
    expect((await claims(["reviewers", "remove", "bob", "--reviewers", file])).code).toBe(1);
    expect((await claims(["reviewers", "list", "--reviewers", file])).stdout).toBe("alice\tAlice Martin\n");
  }, 120_000);

  it("tightens a reviewers file others can read to owner-only when it reads it", async () => {
    const file = join(dir, "open.yaml");
    writeFileSync(file, `reviewers:\n  - id: carol\n    token_sha256: ${HASH_A}\n`, { mode: 0o644 });
    expect((await claims(["reviewers", "list", "--reviewers", file])).stdout).toBe("carol\n");
    expect(statSync(file).mode & 0o777).toBe(0o600);
  }, 120_000);
});

describe("a bad reviewers file", () => {
  it.each([
    [
      "a duplicate id",
      `reviewers:\n  - id: a\n    token_sha256: ${HASH_A}\n  - id: a\n    token_sha256: ${HASH_B}\n`,
      /:4 row 'a' reviewers\[1\]\.id: reviewer id a is listed twice/,
    ],
    [
      "a duplicate token hash",
      `reviewers:\n  - id: a\n    token_sha256: ${HASH_A}\n  - id: b\n    token_sha256: ${HASH_A}\n`,
      /:5 row 'b' reviewers\[1\]\.token_sha256: this token hash is reviewers\[0\]'s too/,
    ],
    [
      "a malformed hash",
      `reviewers:\n  - id: a\n    token_sha256: ${HASH_A}\n  - id: b\n    token_sha256: NOT-A-HASH\n`,
      /:5 .*token_sha256.*64 lower-case hex digits/,
    ],
    ["an unknown key", `reviewers:\n  - id: a\n    token_sha256: ${HASH_A}\n    nam: Al\n`, /:4 .*unknown key "nam"/],
    ["malformed YAML", `reviewers:\n  - id: a\n   token_sha256: [\n`, /bad\.yaml:\d/],
  ])(
    "(%s) stops claims serve with exit 2 naming the line, before anything starts",
    async (_name, text, message) => {
      const file = join(dir, "bad.yaml");
      writeFileSync(file, text, { mode: 0o600 });
      const data = join(dir, `data-${Math.random().toString(36).slice(2)}`);
      const out = await claims(["serve", "--port", "0", "--data-dir", data, "--reviewers", file], {
        CLAIMS_API_TOKEN: "an-intake-token-long-enough",
      });
      expect(out.code).toBe(2);
      expect(out.stderr).toMatch(message);
      expect(out.stdout).not.toContain("listening on");
    },
    120_000,
  );
});

describe("claims review finds the server", () => {
  it("through the data directory, as claims list does, with the reviewer's token", async () => {
    const seen: string[] = [];
    const api = createServer((req, res) => {
      seen.push(`${req.url} ${String(req.headers.authorization)}`);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ items: [] }));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const data = join(dir, "served");
      mkdirSync(join(data, "store"), { recursive: true });
      const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      writeFileSync(join(data, "store", "serve.json"), JSON.stringify({ pid: process.pid, command: "serve", url }));
      const out = await claims(["review", "list", "--data-dir", data], {
        CLAIMS_REVIEWER_TOKEN: "alice-token-0123456789",
      });
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toBe("no PENDING reviews\n");
      expect(seen).toEqual(["/reviews?status=PENDING&limit=200 Bearer alice-token-0123456789"]);
    } finally {
      api.close();
    }
  }, 120_000);

  it("exits 2 with a clear message when nothing answers", async () => {
    const out = await claims(["review", "list", "--url", "http://127.0.0.1:9"], {
      CLAIMS_REVIEWER_TOKEN: "alice-token-0123456789",
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9: .*is claims serve running\?/);
  }, 120_000);
});
