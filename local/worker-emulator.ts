// An emulator in a worker thread behind a signed front (dynalite, fauxqs): the worker's only way in is a
// MessagePort (worker-channel.ts), taken by this process's own SDK clients (registered by endpoint, so
// `localClientConfig` hands them the channel) and by the signed front on 127.0.0.1, the port other programs
// reach with this run's credentials. The worker script answers { ready } or { error } on start and, after
// "stop" on its port, "stopped" or { error } once it has closed what it keeps.
import { Worker } from "node:worker_threads";
import type { ThreadMemory } from "./memory.ts";
import { EmulatorStartError, LocalStackError } from "./errors.ts";
import { startSignedFront } from "./signed-front.ts";
import type { SigningKeys } from "./auth/sigv4.ts";
import { createWorkerChannel, registerInProcessHandler } from "./worker-channel.ts";
import { registerPortSource } from "./in-process/handlers.ts";
import type { WorkerChannelOptions } from "./worker-channel.ts";

/** A running emulator: its front's endpoint, its thread's memory, and how to stop it. */
export type WorkerEmulator = {
  readonly endpoint: string;
  /** The worker thread's heap (and its emulator's figures); undefined when it does not answer within 5 s. */
  memory(): Promise<ThreadMemory | undefined>;
  /** Asks the worker to compact what it stores (dynalite: LevelDB's compaction of the whole table); false when it cannot. */
  compact(): Promise<boolean>;
  close(): Promise<void>;
};

type WorkerAnswer = { ready?: true; error?: string } | "stopped";
/** An answer to a request by id ("memory", "compact"), apart from the start and stop answers. */
type WorkerReply = { memory?: number; compact?: number; answer: Record<string, unknown> };
const isReply = (m: unknown): m is WorkerReply =>
  typeof m === "object" && m !== null && "answer" in m && ("memory" in m || "compact" in m);

/**
 * Threads whose emulator stopped cleanly, one per script (and profiler flags), kept for the next start of that
 * script in this process: a start then costs the emulator's own set-up, not its thread's module loading (~0.3 CPU-s
 * for dynalite, ~0.6 for fauxqs, issue 36 — the test suite starts a stack over a hundred times). A kept thread holds
 * nothing of its last emulator (its database closed, its app closed, its ports gone) and never keeps the process
 * alive (unref); a second thread of the same script is ended instead of kept. A dynalite on LevelDB files (a state
 * directory: `claims serve`, one per process) gets a thread of its own, as before: the kept threads serve the in-memory
 * tables of the tests and of `claims batch` (judgment call, stop 51: a Scan-at-stop test failed twice in full runs
 * with every thread kept, never alone, cause not found; LevelDB's native handles are where a thread's past lives on).
 */
const keptThreads = new Map<string, { thread: Worker; forget: () => void }>();

/** The scripts (file names) that have a thread kept for their next start, in this process. */
export function keptEmulatorThreads(): string[] {
  return [...keptThreads.keys()].map((key) => key.split(" ")[0]!.split("/").at(-1)!).sort();
}

function keep(key: string, thread: Worker): void {
  if (keptThreads.has(key)) {
    void thread.terminate();
    return;
  }
  const forget = () => {
    if (keptThreads.get(key)?.thread === thread) keptThreads.delete(key);
  };
  thread.once("exit", forget);
  thread.unref();
  keptThreads.set(key, { thread, forget });
}

/** Starts `script` in a worker with `workerData` (plus the channel's `port`) and its signed front on a random port of 127.0.0.1. */
export async function startWorkerEmulator(options: {
  readonly name: string;
  readonly script: URL;
  readonly workerData: Record<string, unknown>;
  readonly keys: SigningKeys;
  readonly observe?: WorkerChannelOptions["observe"];
  /** The worker serves ports other threads attach (`{ attach }`), and nothing must observe its answers. */
  readonly attachable?: boolean;
  /** False: the thread is neither taken from the kept ones nor kept after (dynalite on LevelDB files: below). */
  readonly keepable?: boolean;
}): Promise<WorkerEmulator> {
  const { name } = options;
  // The worker is plain JavaScript: of the parent's node flags it takes only the profiler's (`--input-type`, `--import tsx`… do not apply to it).
  const execArgv = process.execArgv.filter((flag) => flag.startsWith("--cpu-prof"));
  const channel = createWorkerChannel({ name, ...(options.observe ? { observe: options.observe } : {}) });
  const key = `${options.script.href} ${execArgv.join(" ")}`;
  const keepable = options.keepable !== false;
  const kept = keepable ? keptThreads.get(key) : undefined;
  if (kept) keptThreads.delete(key);
  const worker =
    kept?.thread ??
    new Worker(options.script, {
      workerData: { ...options.workerData, port: channel.workerPort },
      transferList: [channel.workerPort],
      execArgv,
    });
  if (kept) {
    kept.thread.off("exit", kept.forget);
    kept.thread.ref();
  }
  const answer = () =>
    new Promise<WorkerAnswer>((resolve, reject) => {
      const onError = (error: Error) => {
        worker.off("message", onMessage);
        reject(error);
      };
      const onMessage = (m: WorkerAnswer | WorkerReply) => {
        if (isReply(m)) return;
        worker.off("error", onError);
        worker.off("message", onMessage);
        resolve(m);
      };
      worker.once("error", onError);
      worker.on("message", onMessage);
    });
  // Requests by id: "memory" and "compact", each answered once (or given up on).
  let nextId = 0;
  const waiting = new Map<string, (answer: Record<string, unknown> | undefined) => void>();
  const onReply = (m: unknown) => {
    if (!isReply(m)) return;
    const key = m.memory !== undefined ? `memory:${m.memory}` : `compact:${m.compact}`;
    waiting.get(key)?.(m.answer);
    waiting.delete(key);
  };
  worker.on("message", onReply);
  const ask = (kind: "memory" | "compact", timeoutMs: number) =>
    new Promise<Record<string, unknown> | undefined>((resolve) => {
      const id = ++nextId;
      const key = `${kind}:${id}`;
      const timer = setTimeout(() => {
        waiting.delete(key);
        resolve(undefined);
      }, timeoutMs);
      timer.unref();
      waiting.set(key, (a) => {
        clearTimeout(timer);
        resolve(a);
      });
      worker.postMessage({ [kind]: id });
    });
  const answered = answer();
  // A kept thread starts its next emulator on the new channel (local/dynalite-worker.mjs, local/sqs-worker.mjs).
  if (kept) worker.postMessage({ restart: { ...options.workerData, port: channel.workerPort } }, [channel.workerPort]);
  const started = await answered.catch(async (error: unknown) => {
    channel.close("it did not start");
    await worker.terminate();
    throw error;
  });
  if (started === "stopped" || started.ready !== true) {
    channel.close("it did not start");
    await worker.terminate();
    throw new EmulatorStartError(
      started === "stopped" ? `${name} stopped at once` : (started.error ?? `${name} did not start`),
    );
  }
  const front = await startSignedFront({
    name,
    keys: options.keys,
    async forward(request) {
      const { response } = await channel.requestHandler.handle({
        method: request.method,
        path: request.url,
        headers: request.headers,
        body: request.body.toString("utf8"),
      });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    },
  }).catch(async (error: unknown) => {
    channel.close("its front did not start");
    await worker.terminate();
    throw error;
  });
  const endpoint = front.endpoint;
  const unregisterHandler = registerInProcessHandler(endpoint, channel.requestHandler);
  const unregisterSource = options.attachable ? registerPortSource(endpoint, () => channel.attach()) : undefined;
  const unregister = () => {
    unregisterHandler();
    unregisterSource?.();
  };
  const onExit = () => channel.close("its worker exited");
  worker.once("exit", onExit);
  let closed: Promise<void> | undefined;
  return {
    endpoint,
    memory: async () => (await ask("memory", 5_000)) as ThreadMemory | undefined,
    compact: async () => (await ask("compact", 600_000))?.compacted === true,
    close() {
      closed ??= (async () => {
        unregister();
        await front.stop();
        const done = answer();
        channel.requestStop();
        const stopped = await done.catch(async (error: unknown) => {
          channel.close("stopped");
          await worker.terminate();
          throw error;
        });
        channel.close("stopped");
        if (stopped !== "stopped") {
          await worker.terminate();
          throw new LocalStackError("EMULATOR_STOP", stopped.error ?? `${name} did not stop`);
        }
        worker.off("message", onReply);
        worker.off("exit", onExit);
        if (keepable) keep(key, worker);
        else await worker.terminate();
      })();
      return closed;
    },
  };
}
