// The local data directory every command reads (docs/cli.md): a module of its own, so the commands that only
// need its path (list, review, reconcile) start without the run store's audit schemas.
import { resolve } from "node:path";

/** The local data directory: `CLAIMS_DATA_DIR` (an empty one is unset), else `.claims` in the working directory. */
export function dataDirFrom(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(option ?? (env.CLAIMS_DATA_DIR?.trim() || ".claims"));
}
