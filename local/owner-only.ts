// The data directory holds customer text, the ledger and this run's credentials: it is owner-only. Created
// 0700; an existing one with access for the group or others is tightened to 0700 and what it holds to
// owner-only; a directory this user cannot tighten is refused with the command that fixes it.
import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DataDirModeError } from "./errors.ts";

const mode = (path: string) => lstatSync(path).mode & 0o777;

/** Makes `dir` (and its parents as needed) owner-only; returns whether it had to tighten anything. */
export function ensureOwnerOnlyDir(dir: string): boolean {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((mode(dir) & 0o077) === 0) return false;
  try {
    tighten(dir);
  } catch (error) {
    throw new DataDirModeError(
      `${dir} is open to other users (mode ${mode(dir).toString(8)}) and cannot be made owner-only: ${(error as Error).message}; run: chmod -R go-rwx ${dir}`,
      error,
    );
  }
  return true;
}

/** chmod go-rwx on `path` and, for a directory, on everything under it (symbolic links are left alone). */
function tighten(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if ((stat.mode & 0o077) !== 0) chmodSync(path, stat.mode & 0o700);
  if (stat.isDirectory()) for (const entry of readdirSync(path)) tighten(join(path, entry));
}
