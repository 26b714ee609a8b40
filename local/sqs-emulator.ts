// fauxqs, closed: fauxqs 1.9.2's startFauxqs listens on 0.0.0.0 whatever host it is given and checks no
// credentials (2.x needs Node ≥ 22.5), so its app is built with the exported `buildApp` and never listens:
// a signed front on 127.0.0.1 (signed-front.ts) checks each request's SigV4 signature against this run's
// keys and hands it to the app with `inject`. With a journal, every answered SQS request is shown to it
// before the answer leaves (see queue-journal.ts), which makes the messages survive a restart.
import { buildApp } from "fauxqs";
import type { QueueJournal } from "./queue-journal.ts";
import { startSignedFront } from "./signed-front.ts";
import type { SigningKeys } from "./auth/sigv4.ts";

/** A running SQS emulator. */
export type SqsEmulator = {
  readonly endpoint: string;
  stop(): Promise<void>;
};

/** Starts fauxqs behind a signed front on 127.0.0.1 (random port), journaling its messages when `journal` is given. */
export async function startSqsEmulator(options: {
  region: string;
  keys: SigningKeys;
  journal?: QueueJournal;
}): Promise<SqsEmulator> {
  const app = buildApp({ logger: false, host: "127.0.0.1", defaultRegion: options.region });
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
  await app.ready();
  const front = await startSignedFront({
    name: "fauxqs",
    keys: options.keys,
    async forward(request) {
      const res = await app.inject({
        method: request.method as "POST",
        url: request.url,
        headers: request.headers,
        payload: request.body,
      });
      return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
    },
  }).catch(async (error: unknown) => {
    await app.close();
    throw error;
  });
  let stopped: Promise<void> | undefined;
  return {
    endpoint: front.endpoint,
    stop: () => (stopped ??= front.stop().then(() => app.close().then(() => journal?.close()))),
  };
}
