// fauxqs, bound to 127.0.0.1. fauxqs 1.9.2's startFauxqs listens on 0.0.0.0 whatever host it is given
// (and has no authentication), and 2.x needs Node ≥ 22.5: so the app is built with its exported
// `buildApp` and listened on loopback here. With a journal, every answered SQS request is shown to it
// before the answer leaves (see queue-journal.ts), which makes the messages survive a restart.
import { buildApp } from "fauxqs";
import type { QueueJournal } from "./queue-journal.ts";

/** A running SQS emulator. */
export type SqsEmulator = {
  readonly endpoint: string;
  stop(): Promise<void>;
};

/** Starts fauxqs on 127.0.0.1 (random port unless given), journaling its messages when `journal` is given. */
export async function startSqsEmulator(options: {
  region: string;
  host?: string;
  port?: number;
  journal?: QueueJournal;
}): Promise<SqsEmulator> {
  const host = options.host ?? "127.0.0.1";
  const app = buildApp({ logger: false, host, defaultRegion: options.region });
  const journal = options.journal;
  if (journal) {
    app.addHook("onSend", async (request, reply, payload) => {
      const target = request.headers["x-amz-target"];
      if (typeof target === "string" && target.startsWith("AmazonSQS.") && typeof payload === "string") {
        journal.observe({
          action: target.slice("AmazonSQS.".length),
          request: request.body,
          status: reply.statusCode,
          response: payload,
        });
      }
      return payload;
    });
  }
  const endpoint = await app.listen({ port: options.port ?? 0, host });
  let stopped: Promise<void> | undefined;
  return {
    endpoint,
    stop: () => (stopped ??= app.close().then(() => journal?.close())),
  };
}
