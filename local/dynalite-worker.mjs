// dynalite (the local DynamoDB) in a worker thread, so its request handling and LevelDB work run beside
// the handlers' event loop instead of on it (local/emulators.ts). Plain JavaScript: a worker does not
// inherit the main thread's TypeScript loader. Messages: in { path?, port } via workerData; out { ready }
// or { error }; "stop" closes its database, then answers "stopped".
//
// dynalite listens on no port (it checks no signature and answers CORS preflights for any origin): the only
// way in is `workerData.port`, a MessagePort on which this process's own SDK clients and the signed front
// (local/signed-front.ts, which checks this run's credentials) send { id, method, path, headers, body } and get
// { id, status, headers, body } back.
import { Buffer } from "node:buffer";
import { EventEmitter } from "node:events";
import { parentPort, workerData } from "node:worker_threads";
import dynalite from "dynalite";

const path = workerData?.path;
// LevelDB appends every write to its log before dynalite answers, so an acknowledged write survives `kill -9`.
const server = dynalite({
  createTableMs: 0,
  deleteTableMs: 0,
  updateTableMs: 0,
  ...(path === undefined ? {} : { path }),
});
const handle = server.listeners("request")[0];
server.once("error", (error) =>
  parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) }),
);
parentPort.postMessage({ ready: true });
// Requests in progress. A Query or Scan still reading when the database closes would read a closed LevelDB,
// which throws uncaught (found by the chaos runs' restarts): so "stop" lets the requests in progress be
// answered before it closes the database.
let inFlight = 0;
let idle;
const started = () => inFlight++;
const ended = () => {
  if (--inFlight === 0 && idle) idle();
};
// "stop" comes on the request channel (after every request sent before it: one port keeps its order) or, from an
// older caller, on parentPort. Requests that arrive after it are refused, so none reads a closed database.
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  const close = () => {
    idle = undefined;
    // dynalite closes its database only in server.close(), which needs a listening server: it listens for that
    // moment with every request refused.
    server.removeAllListeners("request");
    server.on("request", (_req, res) => {
      res.statusCode = 403;
      res.end();
    });
    server.listen(0, "127.0.0.1", () => {
      server.close((error) => parentPort.postMessage(error ? { error: error.message } : "stopped"));
      server.closeAllConnections();
    });
  };
  if (inFlight === 0) close();
  else idle = close;
};
parentPort.on("message", (message) => {
  if (message === "stop") stop();
});

// The request and response dynalite's handler uses: headers, method and url; data/end events; statusCode, setHeader, end.
// `{ attach: port }` on the channel opens another way in for another thread of this process (`claims serve`'s handler
// thread): the same request handling, answered on that port.
const serve = (channel) => (message) => {
  if (message === "stop") return stop();
  if (message?.attach) return void message.attach.on("message", serve(message.attach));
  const { id, method, path: url, headers, body } = message;
  if (stopping) {
    channel.postMessage({
      id,
      status: 503,
      headers: { "content-type": "application/x-amz-json-1.0" },
      body: JSON.stringify({
        __type: "com.amazonaws.dynamodb.v20120810#ServiceUnavailableException",
        message: "dynalite is stopping",
      }),
    });
    return;
  }
  const req = Object.assign(new EventEmitter(), { method, url, headers });
  const out = {};
  const res = {
    statusCode: 200,
    setHeader(name, value) {
      out[name.toLowerCase()] = String(value);
    },
    end(text) {
      channel.postMessage({ id, status: res.statusCode, headers: out, body: text === undefined ? "" : String(text) });
      ended();
    },
  };
  started();
  handle(req, res);
  if (body) req.emit("data", Buffer.from(body, "utf8"));
  req.emit("end");
};
workerData?.port?.on("message", serve(workerData.port));
