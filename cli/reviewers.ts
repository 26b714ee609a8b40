// `claims reviewers add|list|remove` (docs/cli.md): the reviewers file `claims serve` reads — one credential per
// named person, only its SHA-256 stored; `add` prints the new token once. And how `claims serve` picks its
// reviewers: an OpenID Connect issuer, the reviewers file, or the single CLAIMS_REVIEWER_TOKEN.
import { randomBytes } from "node:crypto";
import type { Command } from "commander";
import { reviewerForToken, tokenSha256 } from "../functions/http/bearer.ts";
import type { ReviewerCredential } from "../functions/http/bearer.ts";
import {
  loadReviewers,
  REVIEWER_ID,
  REVIEWERS_RECHECK_MS,
  watchReviewers,
  writeReviewers,
} from "../local/auth/reviewers.ts";
import type { OidcSettings } from "../local/auth/oidc.ts";
import { CliError } from "./errors.ts";
import { REVIEWER_TOKEN_FILE_VARIABLE } from "./tokens.ts";
import { parseCents } from "../core/kernel/money.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The reviewers file of a command: --reviewers, else CLAIMS_REVIEWERS_FILE (undefined when neither is given). */
export function reviewersFileFrom(option: string | undefined, env: Env = process.env): string | undefined {
  const value = option ?? env.CLAIMS_REVIEWERS_FILE?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** The OIDC issuer and audiences of the review routes, when CLAIMS_REVIEWER_OIDC_ISSUER is set. */
export function oidcFrom(env: Env = process.env): OidcSettings | undefined {
  const issuer = env.CLAIMS_REVIEWER_OIDC_ISSUER?.trim();
  if (!issuer) return undefined;
  if (!/^https?:\/\/\S+$/.test(issuer))
    throw new CliError(
      `CLAIMS_REVIEWER_OIDC_ISSUER must be the issuer's URL (https://…), not ${JSON.stringify(issuer)}`,
    );
  const audience = (env.CLAIMS_REVIEWER_OIDC_AUDIENCE ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  if (audience.length === 0)
    throw new CliError(
      "CLAIMS_REVIEWER_OIDC_AUDIENCE is missing: the audience (client id) reviewers' tokens are issued for, comma-separated for several",
    );
  return { issuer, audience };
}

/** What `claims serve` passes the stack for its reviewers, and the line it prints about them (none: the single token). */
export function reviewerSetup(
  option: string | undefined,
  apiToken: string,
  env: Env = process.env,
): {
  stack: { reviewers?: () => readonly ReviewerCredential[]; reviewerOidc?: OidcSettings };
  describe?: string;
  /** Where a reviewer's token comes from, as the API's refusals name it (none: CLAIMS_REVIEWER_TOKEN). */
  tokenSource?: string;
} {
  const oidc = oidcFrom(env);
  const file = reviewersFileFrom(option, env);
  if (oidc && file)
    throw new CliError(
      "give reviewers one way: a reviewers file (--reviewers / CLAIMS_REVIEWERS_FILE) or an OIDC issuer (CLAIMS_REVIEWER_OIDC_ISSUER), not both",
    );
  if (oidc)
    return {
      stack: { reviewerOidc: oidc },
      tokenSource: `a JWT of ${oidc.issuer}`,
      describe: `  reviewers JWTs of ${oidc.issuer} for ${oidc.audience.join(", ")} (group reviewers or scope claims/review)`,
    };
  if (!file) return { stack: {} };
  const reviewers = loadReviewers(file);
  if (reviewers.length === 0)
    throw new CliError(`reviewers file ${file} lists no reviewer: claims reviewers add ID --reviewers ${file}`);
  if (reviewerForToken(apiToken, reviewers))
    throw new CliError(
      `CLAIMS_API_TOKEN is ${reviewerForToken(apiToken, reviewers)!.id}'s reviewer token too: reviewers and intake use separate credentials`,
    );
  // Read again on use, at most every REVIEWERS_RECHECK_MS: `claims reviewers add|remove` takes effect without a restart.
  const live = watchReviewers(file, {
    onProblem: (message) => process.stderr.write(`  WARNING  ${message}\n`),
  });
  live();
  return {
    stack: { reviewers: live },
    tokenSource: `your own token from claims reviewers add; in the CLI: --token-file or ${REVIEWER_TOKEN_FILE_VARIABLE}`,
    describe: `  reviewers ${reviewers.length} named in ${file}: ${reviewers.map((r) => r.id).join(", ")} (changes to the file take effect within ${REVIEWERS_RECHECK_MS / 1000} s)`,
  };
}

function fileOf(o: { reviewers?: string }): string {
  const file = reviewersFileFrom(o.reviewers);
  if (!file) throw new CliError("which reviewers file? pass --reviewers FILE or set CLAIMS_REVIEWERS_FILE");
  return file;
}

/** Registers `claims reviewers add|list|remove`. */
export function registerReviewersCommands(program: Command): void {
  const reviewers = program
    .command("reviewers")
    .description("name the people who decide reviews locally: the reviewers file claims serve reads (--reviewers)");
  const fileOption = "--reviewers <file>";
  const fileHelp = "the reviewers file (default $CLAIMS_REVIEWERS_FILE)";
  reviewers
    .command("add")
    .description("add a reviewer with a new random token, printed once (only its SHA-256 is stored)")
    .argument("<id>", "the reviewer's id, recorded on every decision they take")
    .option("--name <name>", "a display name")
    .option(
      "--max-approval <eur>",
      "the most they approve alone, in EUR (above it their approval waits for a reviewer whose limit covers it)",
    )
    .option(fileOption, fileHelp)
    .action((id: string, o: { name?: string; maxApproval?: string; reviewers?: string }) => {
      const file = fileOf(o);
      if (!REVIEWER_ID.test(id))
        throw new CliError(
          `reviewer id ${JSON.stringify(id)}: use 1-128 letters, digits and . _ @ + - (starting with a letter or digit)`,
        );
      const name = o.name?.trim();
      if (name !== undefined && (name === "" || name.length > 128 || /[\p{Cc}]/u.test(name)))
        throw new CliError("--name is one line of 1-128 characters");
      const list = loadReviewers(file, { missingOk: true });
      if (list.some((r) => r.id === id))
        throw new CliError(
          `reviewer ${id} is already in ${file} (claims reviewers remove ${id} first to give them a new token)`,
        );
      const max = o.maxApproval === undefined ? undefined : Number(o.maxApproval);
      if (max !== undefined && !(max > 0 && parseCents(max).ok))
        throw new CliError(`--max-approval ${JSON.stringify(o.maxApproval)}: a positive amount of EUR in whole cents`);
      const token = randomBytes(24).toString("base64url");
      writeReviewers(file, [
        ...list,
        {
          id,
          ...(name ? { name } : {}),
          token_sha256: tokenSha256(token),
          ...(max !== undefined ? { max_approval: max } : {}),
        },
      ]);
      process.stdout.write(
        `added reviewer ${id}${name ? ` (${name})` : ""}${max !== undefined ? `, approving up to ${max.toFixed(2)} EUR alone,` : ""} to ${file}\ntoken (shown once; only its SHA-256 is stored): ${token}\n` +
          `give it to ${id}, who keeps it in a file of their own and points ${REVIEWER_TOKEN_FILE_VARIABLE} at it (or passes --token-file); CLAIMS_REVIEWER_TOKEN is the server's single token when there is no reviewers file\n`,
      );
    });
  reviewers
    .command("list")
    .description("list the reviewers of the file (ids and names; tokens are never stored)")
    .option(fileOption, fileHelp)
    .action((o: { reviewers?: string }) => {
      const file = fileOf(o);
      const list = loadReviewers(file);
      if (list.length === 0) process.stdout.write(`no reviewers in ${file}\n`);
      for (const r of list)
        process.stdout.write(
          `${r.id}${r.name ? `\t${r.name}` : ""}${r.max_approval !== undefined ? `\tmax_approval ${r.max_approval.toFixed(2)} EUR` : ""}\n`,
        );
    });
  reviewers
    .command("remove")
    .description("remove a reviewer: a running claims serve refuses their token within a second or two")
    .argument("<id>", "the reviewer's id")
    .option(fileOption, fileHelp)
    .action((id: string, o: { reviewers?: string }) => {
      const file = fileOf(o);
      const list = loadReviewers(file);
      if (!list.some((r) => r.id === id)) {
        process.stderr.write(`claims: no reviewer ${id} in ${file}\n`);
        process.exitCode = 1;
        return;
      }
      writeReviewers(
        file,
        list.filter((r) => r.id !== id),
      );
      process.stdout.write(`removed reviewer ${id} from ${file}\n`);
    });
}
