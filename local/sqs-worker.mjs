// fauxqs (the local SQS) in a worker thread, so its request handling, Fastify's routing and the long polls'
// timers run beside the handlers' event loop instead of on it (local/sqs-emulator.ts). Plain JavaScript: a
// worker does not inherit the main thread's TypeScript loader. Messages: in { region, port } via workerData;
// out { ready } or { error }; "stop" (on the port) closes the app, then answers "stopped" on parentPort.
//
// fauxqs listens on no port (1.9.2's own start-up listens on 0.0.0.0 and checks no credentials): the only way
// in is `workerData.port`, a MessagePort on which this process's own SDK clients and the signed front
// (local/signed-front.ts, which checks this run's credentials) send { id, method, path, headers, body } and get
// { id, status, headers, body } back. The queue journal sees each answer on the other side, before its caller.
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";
import { buildApp } from "fauxqs";

const app = buildApp({ logger: false, host: "127.0.0.1", defaultRegion: workerData.region });
const channel = workerData.port;
let stopping = false;

const refused = (id) => ({
  id,
  status: 503,
  headers: { "content-type": "application/x-amz-json-1.0", "x-amzn-query-error": "ServiceUnavailable;Receiver" },
  body: JSON.stringify({ __type: "com.amazonaws.sqs#ServiceUnavailable", message: "fauxqs is stopping" }),
});

/** Header values as strings (inject gives numbers and arrays too). */
const plainHeaders = (headers) => {
  const out = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : String(value);
  return out;
};

const handle = async ({ id, method, path, headers, body }) => {
  try {
    const res = await app.inject({ method, url: path, headers, payload: body });
    channel.postMessage({ id, status: res.statusCode, headers: plainHeaders(res.headers), body: res.payload });
  } catch (error) {
    channel.postMessage({
      id,
      status: 500,
      headers: { "content-type": "application/x-amz-json-1.0" },
      body: JSON.stringify({ __type: "InternalFailure", message: `fauxqs failed: ${error?.message ?? error}` }),
    });
  }
};

// Requests still waiting (long polls) when "stop" comes end with the app: the store's shutdown answers them.
const stop = () => {
  if (stopping) return;
  stopping = true;
  app.close().then(
    () => parentPort.postMessage("stopped"),
    (error) => parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) }),
  );
};

const mb = (bytes) => Math.round((bytes / 1048576) * 10) / 10;
// "memory" on parentPort: this thread's heap (MB), for serve's memory report; fauxqs compacts nothing.
parentPort.on("message", (message) => {
  if (message?.memory !== undefined) {
    const heap = getHeapStatistics();
    parentPort.postMessage({
      memory: message.memory,
      answer: {
        used: mb(heap.used_heap_size),
        total: mb(heap.total_heap_size),
        external: mb(heap.external_memory),
        malloced: mb(heap.malloced_memory),
      },
    });
  } else if (message?.compact !== undefined) parentPort.postMessage({ compact: message.compact, answer: {} });
});

channel.on("message", (message) => {
  if (message === "stop") return stop();
  if (stopping) return channel.postMessage(refused(message.id));
  void handle(message);
});

app.ready().then(
  () => parentPort.postMessage({ ready: true }),
  (error) => parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) }),
);
