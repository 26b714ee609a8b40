// One process at a time on a state directory: LevelDB allows one opener, and a second dynalite on the same
// files would crash. `serve.json` in the directory is the lock and says who holds it (pid, the API's URL, the
// table's loopback endpoint), so that `claims replay|report|list` can read the store of a running
// `claims serve` through its endpoint instead of opening the files. A lock whose process is gone (a
// `kill -9`) is taken over.
import { existsSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StateDirBusyError } from "./errors.ts";

/** What the holder of a state directory tells others. */
export type StateHolder = {
  readonly pid: number;
  /** When the process started (Linux: clock ticks since boot), so that a pid reused after a `kill -9` is not taken for the holder. */
  readonly pid_started?: number;
  readonly command: string;
  readonly started_at: string;
  /** The HTTP API of `claims serve`, once it listens. */
  readonly url?: string;
  /** The table's endpoint (dynalite on 127.0.0.1), once it runs. */
  readonly dynamodb?: string;
};

/** A held state directory. */
export type StateLock = {
  /** Tells others more about the holder (its URL, its table endpoint). */
  update(info: Partial<Pick<StateHolder, "url" | "dynamodb">>): void;
  release(): void;
};

const lockPath = (dir: string) => join(dir, "serve.json");

/** When `pid` started, in clock ticks since boot (Linux /proc); undefined elsewhere. */
export function processStarted(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command (which may hold spaces) in parentheses: state is field 3, starttime field 22.
    const start = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    return Number.isFinite(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the holder is a live process: its pid answers and, where known, started when the holder did (pids are reused). */
function alive(holder: StateHolder): boolean {
  if (!Number.isInteger(holder.pid) || holder.pid <= 0) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return holder.pid_started === undefined || processStarted(holder.pid) === holder.pid_started;
}

/** The live holder of the state directory, if any. */
export function stateHolder(dir: string): StateHolder | undefined {
  const path = lockPath(dir);
  if (!existsSync(path)) return undefined;
  try {
    const holder = JSON.parse(readFileSync(path, "utf8")) as StateHolder;
    return alive(holder) ? holder : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the state directory for this process, or throws StateDirBusyError naming the holder. */
export function lockStateDir(dir: string, command: string): StateLock {
  const path = lockPath(dir);
  const started = processStarted(process.pid);
  let info: StateHolder = {
    pid: process.pid,
    ...(started === undefined ? {} : { pid_started: started }),
    command,
    started_at: new Date().toISOString(),
  };
  const write = (flag: "wx" | "w") => writeFileSync(path, `${JSON.stringify(info)}\n`, { flag });
  for (let attempt = 0; ; attempt++) {
    try {
      write("wx");
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw error;
      const holder = stateHolder(dir);
      if (holder && holder.pid !== process.pid) {
        throw new StateDirBusyError(
          `${dir} is in use by ${holder.command} (pid ${holder.pid}${holder.url ? `, ${holder.url}` : ""}): stop it first, or use another --data-dir`,
          holder,
        );
      }
      // Left behind by a process that is gone: take it over.
      unlinkSync(path);
    }
  }
  let held = true;
  return {
    update(more) {
      if (!held) return;
      info = { ...info, ...more };
      write("w");
    },
    release() {
      if (!held) return;
      held = false;
      try {
        const current = JSON.parse(readFileSync(path, "utf8")) as StateHolder;
        if (current.pid === process.pid) unlinkSync(path);
      } catch {
        // already gone
      }
    },
  };
}
