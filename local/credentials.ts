// This run's credentials for the emulators: a random key pair made at every start, which every emulator
// port requires (local/signed-front.ts, the bus) and which `claims serve` writes owner-only to
// `<data-dir>/local-credentials.json` for the product's other commands and the operator's tools:
// `{ region, accessKeyId, secretAccessKey, endpoints: { dynamodb, sqs, events } }`.
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalStackError } from "./errors.ts";
import type { SigningKeys } from "./auth/sigv4.ts";

/** The credentials file of a data directory. */
export const LOCAL_CREDENTIALS_FILE = "local-credentials.json";

/** What `<data-dir>/local-credentials.json` holds. */
export type LocalCredentials = SigningKeys & {
  readonly region: string;
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string; readonly events: string };
};

/** Writes the credentials file (0600, replaced atomically so no reader sees half of it); returns its path. */
export function writeLocalCredentials(dataDir: string, credentials: LocalCredentials): string {
  const path = join(dataDir, LOCAL_CREDENTIALS_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return path;
}

/** The credentials `claims serve` wrote in `dataDir`; undefined when there is no file, an error naming it when it is unreadable. */
export function readLocalCredentials(dataDir: string): LocalCredentials | undefined {
  const path = join(dataDir, LOCAL_CREDENTIALS_FILE);
  if (!existsSync(path)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new LocalStackError("LOCAL_CREDENTIALS", `${path} cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const c = parsed as Partial<LocalCredentials> | null;
  if (
    typeof c?.accessKeyId !== "string" ||
    typeof c.secretAccessKey !== "string" ||
    typeof c.region !== "string" ||
    typeof c.endpoints?.dynamodb !== "string"
  )
    throw new LocalStackError(
      "LOCAL_CREDENTIALS",
      `${path} is not a credentials file (region, accessKeyId, secretAccessKey, endpoints)`,
    );
  return c as LocalCredentials;
}
