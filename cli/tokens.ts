// Where the CLI takes tokens from: the environment or a file, never the command line (`ps` shows every
// argument to every local user). A token the server accepts (CLAIMS_API_TOKEN, CLAIMS_REVIEWER_TOKEN for
// `claims serve`) has at least 16 characters; an empty variable counts as unset.
import { readFileSync, statSync } from "node:fs";
import { TokenConfigError } from "./errors.ts";

/** The shortest token `claims serve` accepts. */
export const MIN_SERVER_TOKEN_LENGTH = 16;

type Env = Readonly<Record<string, string | undefined>>;

/** The variable's value, trimmed; undefined when it is unset or empty. */
export function tokenFromEnv(name: string, env: Env = process.env): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** A token `claims serve` accepts from `name`: undefined when unset (serve generates one), TokenConfigError when too short. */
export function serverToken(name: string, env: Env = process.env): string | undefined {
  const token = tokenFromEnv(name, env);
  if (token !== undefined && token.length < MIN_SERVER_TOKEN_LENGTH)
    throw new TokenConfigError(
      `${name} is ${token.length} characters long; a token the server accepts needs at least ${MIN_SERVER_TOKEN_LENGTH} (unset it and claims serve generates one)`,
    );
  if (token !== undefined && [...token].some((c) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f))
    throw new TokenConfigError(`${name} holds a space or a control character; a token is one word`);
  return token;
}

/**
 * The token of a client command: the file's first line when `--token-file` is given, else the variable. A token
 * shorter than any server accepts is a configuration error (exit 2) before any request is sent.
 */
export function clientToken(tokenFile: string | undefined, name: string, env: Env = process.env): string | undefined {
  const token = tokenFile === undefined ? tokenFromEnv(name, env) : tokenFromFile(tokenFile);
  if (token !== undefined && token.length < MIN_SERVER_TOKEN_LENGTH)
    throw new TokenConfigError(
      `${tokenFile === undefined ? name : `the token in --token-file ${tokenFile}`} is ${token.length} characters long; no server accepts a token shorter than ${MIN_SERVER_TOKEN_LENGTH}`,
    );
  return token;
}

/** The variable naming a file that holds the reviewer's own token (the CLI's; `claims serve` never reads it). */
export const REVIEWER_TOKEN_FILE_VARIABLE = "CLAIMS_REVIEWER_TOKEN_FILE";

/**
 * The reviewer token of a review command and where it came from: `--token-file`, else the file
 * CLAIMS_REVIEWER_TOKEN_FILE names, else CLAIMS_REVIEWER_TOKEN (the server's single token, or your own).
 */
export function reviewerClientToken(
  tokenFile: string | undefined,
  env: Env = process.env,
): { token: string; from: string } | undefined {
  const fromVariable = tokenFromEnv(REVIEWER_TOKEN_FILE_VARIABLE, env);
  if (tokenFile !== undefined) return { token: clientToken(tokenFile, "", env)!, from: `--token-file ${tokenFile}` };
  if (fromVariable !== undefined) {
    const token = tokenFromFile(fromVariable, REVIEWER_TOKEN_FILE_VARIABLE);
    if (token.length < MIN_SERVER_TOKEN_LENGTH)
      throw new TokenConfigError(
        `the token in ${REVIEWER_TOKEN_FILE_VARIABLE}=${fromVariable} is ${token.length} characters long; no server accepts a token shorter than ${MIN_SERVER_TOKEN_LENGTH}`,
      );
    return { token, from: `${REVIEWER_TOKEN_FILE_VARIABLE} (${fromVariable})` };
  }
  const token = clientToken(undefined, "CLAIMS_REVIEWER_TOKEN", env);
  return token === undefined ? undefined : { token, from: "CLAIMS_REVIEWER_TOKEN" };
}

/** The first line of a token file, trimmed; TokenConfigError when it cannot be read or is empty. */
function tokenFromFile(tokenFile: string, named = "--token-file"): string {
  const what = named === "--token-file" ? `--token-file ${tokenFile}` : `${named}=${tokenFile}`;
  let text: string;
  try {
    if (!statSync(tokenFile).isFile()) throw new Error("not a file");
    text = readFileSync(tokenFile, "utf8");
  } catch (error) {
    throw new TokenConfigError(`${what} cannot be read: ${(error as Error).message}`);
  }
  const token = text.split(/\r?\n/)[0]?.trim() ?? "";
  if (token === "") throw new TokenConfigError(`${what} is empty`);
  return token;
}
