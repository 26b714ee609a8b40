// fauxqs (the local SQS) in a worker thread, so its request handling, Fastify's routing and the long polls'
// timers run beside the handlers' event loop instead of on it (local/sqs-emulator.ts). Plain JavaScript: a
// worker does not inherit the main thread's TypeScript loader. Messages: in { region, port } via workerData;
// out { ready } or { error }; "stop" (on the port) closes the app, then answers "stopped" on parentPort.
//
// fauxqs listens on no port (1.9.2's own start-up listens on 0.0.0.0 and checks no credentials): the only way
// in is `workerData.port`, a MessagePort on which this process's own SDK clients and the signed front
// (local/signed-front.ts, which checks this run's credentials) send { id, method, path, headers, body } and get
// { id, status, headers, body } back. The queue journal sees each answer on the other side, before its caller.
//
// The SQS JSON protocol (POST / with `application/x-amz-json-1.0`, every request the stack and the SDK make) goes
// straight to fauxqs's own SQS router — the action functions and the store its app registers — with the body parsed
// as its app parses it, skipping Fastify's injected request: Fastify, light-my-request and their hooks were ~90 % of
// this thread's CPU per message and fauxqs's own code ~3 % (issue 37, bench/RESULTS.md). The answer is the one the
// app gives (status, content type, the router's headers, the same request-id headers, the JSON body); anything else
// (a body that is not JSON, another path or protocol, an oversized body) still goes through the app.
// `workerData.viaApp` sends everything through the app (the tests compare both ways).
import { Buffer } from "node:buffer";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { URL } from "node:url";
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";
import { buildApp } from "fauxqs";

// This thread's name in /proc (Linux; elsewhere nothing), so per-thread CPU (`top -H`, the http bench) tells it apart.
try {
  writeFileSync("/proc/thread-self/comm", "fauxqs");
} catch {
  // not Linux: the name is only for observing
}

// fauxqs's SQS router, the one its app builds (captured as the app registers its actions on it): the same module
// instance as the app's, by the same URL.
const { SqsRouter } = await import(new URL("./sqs/sqsRouter.js", import.meta.resolve("fauxqs")).href);
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

/** The app's body limit (fauxqs 1.9.2: 11 MiB): a larger body goes to the app, which refuses it. */
const APP_BODY_LIMIT = 11 * 1_048_576;

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
        ...current?.answered,
      },
    });
  } else if (message?.compact !== undefined) parentPort.postMessage({ compact: message.compact, answer: {} });
  else if (message?.restart !== undefined) begin(message.restart);
});

/**
 * One emulator's life in this thread: fauxqs's app for `data.region`, its requests on `data.port`, until "stop"
 * closes the app and answers "stopped". A thread whose emulator stopped may be given the next one (`{ restart: data }`
 * on parentPort, local/worker-emulator.ts keeps such threads for the next start in this process): the app, its store
 * and its router are made anew for it — the modules, already loaded, are what a start no longer pays for.
 */
let current;
function begin(workerData) {
  const routers = [];
  const register = SqsRouter.prototype.register;
  SqsRouter.prototype.register = function (...args) {
    if (!routers.includes(this)) routers.push(this);
    return register.apply(this, args);
  };
  const app = buildApp({ logger: false, host: "127.0.0.1", defaultRegion: workerData.region });
  SqsRouter.prototype.register = register;
  const [router] = routers;
  const direct = workerData.viaApp !== true;
  // Requests answered each way, in the thread's memory report.
  const answered = { direct: 0, via_app: 0 };
  const channel = workerData.port;
  let stopping = false;
  /** A request of the SQS JSON protocol, answered by fauxqs's router as its app would; undefined for anything else. */
  const directAnswer = async (method, path, headers, body) => {
    if (!direct || method !== "POST" || path !== "/" || typeof body !== "string") return undefined;
    if (Buffer.byteLength(body) > APP_BODY_LIMIT) return undefined;
    const lower = {};
    for (const [name, value] of Object.entries(headers)) lower[name.toLowerCase()] = value;
    if (!String(lower["content-type"] ?? "").includes("application/x-amz-json-1.0")) return undefined;
    let parsed;
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined; // the app's own answer to a body that is not JSON
    }
    const reply = {
      statusCode: 200,
      headers: {},
      status(code) {
        reply.statusCode = code;
        return reply;
      },
      header(name, value) {
        reply.headers[name.toLowerCase()] = String(value);
        return reply;
      },
    };
    let result;
    try {
      result = await router.handle({ headers: lower, body: parsed }, reply);
    } catch (error) {
      // What Fastify answers for an error a route throws.
      const statusCode = Number.isInteger(error?.statusCode) && error.statusCode >= 400 ? error.statusCode : 500;
      reply.statusCode = statusCode;
      reply.headers = { "content-type": "application/json; charset=utf-8" };
      result = {
        statusCode,
        ...(error?.code ? { code: error.code } : {}),
        error: statusCode === 500 ? "Internal Server Error" : "Bad Request",
        message: String(error?.message ?? error),
      };
    }
    const text = JSON.stringify(result);
    // Fastify's content type (a JSON body's charset), the app's onSend hook, and the injected response's own headers.
    const type = reply.headers["content-type"] ?? "application/json";
    reply.headers["content-type"] = type.includes("charset") ? type : `${type}; charset=utf-8`;
    reply.headers["x-amz-request-id"] = randomUUID().replaceAll("-", "").toUpperCase().slice(0, 16);
    reply.headers["x-amz-id-2"] = "fauxqs";
    reply.headers["content-length"] = String(Buffer.byteLength(text));
    reply.headers.date = new Date().toUTCString();
    reply.headers.connection = "keep-alive";
    return { status: reply.statusCode, headers: reply.headers, body: text };
  };

  const handle = async ({ id, method, path, headers, body }) => {
    try {
      const answer = await directAnswer(method, path, headers, body);
      if (answer !== undefined) {
        answered.direct++;
        return channel.postMessage({ id, ...answer });
      }
      answered.via_app++;
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
  channel.on("message", (message) => {
    if (message === "stop") return stop();
    if (stopping) return channel.postMessage(refused(message.id));
    void handle(message);
  });

  app.ready().then(
    () =>
      parentPort.postMessage(
        direct && router === undefined
          ? { error: "fauxqs's SQS router was not found (fauxqs changed: see local/sqs-worker.mjs)" }
          : { ready: true },
      ),
    (error) => parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) }),
  );
  current = { stop, answered };
}
begin(workerData);
