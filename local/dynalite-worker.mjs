// dynalite (the local DynamoDB) in a worker thread, so its request handling and LevelDB work run beside
// the handlers' event loop instead of on it (local/emulators.ts). Plain JavaScript: a worker does not
// inherit the main thread's TypeScript loader. Messages: in { path?, port } via workerData; out { ready }
// or { error }; "stop" closes its database, then answers "stopped".
//
// dynalite listens on no port (it checks no signature and answers CORS preflights for any origin): the only
// way in is `workerData.port`, a MessagePort on which this process's own SDK clients and the signed front
// (local/signed-front.ts, which checks this run's credentials) send { id, method, path, headers, body } and get
// { id, status, headers, body } back.
//
// Two repairs of dynalite 4.0.0, made here before it loads (issue 39: `claims serve` grew ~170 MB and its data
// directory ~60 KB per claim while running):
// - its streams over LevelDB never close their iterators: they call `iterator.return()`, which abstract-level's
//   iterators do not have (they have `close()`), and nothing closes one that reached its end. Every Query and Scan
//   left an open LevelDB iterator, which pins the memtables and table files of its moment: native memory and disk
//   that grew with every claim, released only by a restart. The iterators get the `return()` dynalite calls.
// - the database it opens is kept (`db`), for the memory report ("memory" on parentPort: this thread's heap,
//   LevelDB's own figures, the iterators open) and a compaction while running ("compact": the table's files
//   rewritten without what was overwritten or deleted, as a restart used to do).
import { Buffer } from "node:buffer";
import { EventEmitter } from "node:events";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import process from "node:process";
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";

// This thread's name in /proc (Linux; elsewhere nothing), so per-thread CPU (`top -H`, the http bench) tells it apart.
try {
  writeFileSync("/proc/thread-self/comm", "dynalite");
} catch {
  // not Linux: the name is only for observing
}

const fromDynalite = createRequire(createRequire(import.meta.url).resolve("dynalite"));
const abstractLevel = createRequire(fromDynalite.resolve("level"))("abstract-level");
for (const Iterator of [
  abstractLevel.AbstractIterator,
  abstractLevel.AbstractKeyIterator,
  abstractLevel.AbstractValueIterator,
]) {
  if (typeof Iterator.prototype.return !== "function")
    Iterator.prototype.return = async function () {
      await this.close();
      return { done: true, value: undefined };
    };
}
// The iterators open now (attached to the database until closed): flat under load once they are closed.
let openIterators = 0;
// The database dynalite opens (one per worker).
const opened = [];
const level = fromDynalite("level");
level.Level = class KeptLevel extends level.Level {
  constructor(...args) {
    super(...args);
    opened.push(this);
  }
  attachResource(resource) {
    openIterators++;
    return super.attachResource(resource);
  }
  detachResource(resource) {
    openIterators--;
    return super.detachResource(resource);
  }
};
// Table descriptions kept in memory (issue 37): dynalite reads the table's description from LevelDB (a read on libuv's
// pool and a JSON decode) at the start of every item request. This thread is the only writer of the descriptions
// (CreateTable, UpdateTable, DeleteTable write them through `tableDb`), so a description read for an item request is
// kept until the next write of it, and a read that started before a write is not kept. Only the item requests' reads
// (`checkStatus`, an ACTIVE or UPDATING table) are served from memory; those never change the description they are
// handed, and the table requests still read their own copy from LevelDB.
const dynaliteDb = fromDynalite("./db");
const createStore = dynaliteDb.create;
dynaliteDb.create = (options) => keepingTables(createStore(options));
function keepingTables(store) {
  const kept = new Map();
  const writes = new Map();
  const written = (name) => {
    writes.set(name, (writes.get(name) ?? 0) + 1);
    kept.delete(name);
  };
  const { tableDb } = store;
  for (const method of ["put", "del"]) {
    const original = tableDb[method];
    tableDb[method] = function (key, ...rest) {
      written(key);
      return original.call(this, key, ...rest);
    };
  }
  const batch = tableDb.batch;
  tableDb.batch = function (operations, ...rest) {
    for (const op of operations) written(op.key);
    return batch.call(this, operations, ...rest);
  };
  const getTable = store.getTable;
  store.getTable = function (name, checkStatus, cb) {
    const done = typeof checkStatus === "function" ? checkStatus : cb;
    if (!checkStatus) return getTable.call(this, name, checkStatus, cb);
    const table = kept.get(name);
    if (table !== undefined) return void process.nextTick(done, null, table);
    const generation = writes.get(name) ?? 0;
    return getTable.call(this, name, true, (error, found) => {
      if (!error && (writes.get(name) ?? 0) === generation && /^(ACTIVE|UPDATING)$/.test(found?.TableStatus))
        kept.set(name, found);
      done(error, found);
    });
  };
  const recreate = store.recreate;
  store.recreate = function (...args) {
    recreate.apply(this, args);
    keepingTables(this);
  };
  return store;
}
const { default: dynalite } = await import("dynalite");

const mb = (bytes) => Math.round((bytes / 1048576) * 10) / 10;
/** This thread's heap and LevelDB's figures, in MB. */
const memory = () => {
  const heap = getHeapStatistics();
  const db = opened.at(-1);
  const property = (name) => {
    try {
      return db?.status === "open" && typeof db.getProperty === "function" ? db.getProperty(name) : undefined;
    } catch {
      return undefined;
    }
  };
  const leveldbBytes = Number(property("leveldb.approximate-memory-usage"));
  const tables = property("leveldb.sstables");
  return {
    used: mb(heap.used_heap_size),
    total: mb(heap.total_heap_size),
    external: mb(heap.external_memory),
    malloced: mb(heap.malloced_memory),
    iterators: openIterators,
    ...(Number.isFinite(leveldbBytes) ? { leveldb: mb(leveldbBytes) } : {}),
    ...(typeof tables === "string" ? { tables: (tables.match(/^\s*\d+:\d+\[/gm) ?? []).length } : {}),
  };
};
/** Compacts the whole table: LevelDB rewrites its files without what later writes replaced or deleted. */
const compact = async () => {
  const db = opened.at(-1);
  if (db?.status !== "open" || typeof db.compactRange !== "function") return { compacted: false };
  await db.compactRange("\u0000", "\uffff", { keyEncoding: "utf8" });
  return { compacted: true };
};
parentPort.on("message", (message) => {
  if (message === "stop") current?.stop();
  else if (message?.restart !== undefined) begin(message.restart);
  else if (message?.memory !== undefined) parentPort.postMessage({ memory: message.memory, answer: memory() });
  else if (message?.compact !== undefined)
    compact().then(
      (answer) => parentPort.postMessage({ compact: message.compact, answer }),
      (error) =>
        parentPort.postMessage({ compact: message.compact, answer: { error: String(error?.message ?? error) } }),
    );
});

/**
 * One emulator's life in this thread: dynalite over `data.path` (in memory without one), its requests on `data.port`,
 * until "stop" closes its database and answers "stopped". A thread whose emulator stopped may be given the next one
 * (`{ restart: data }` on parentPort, local/worker-emulator.ts keeps such threads for the next start in this process):
 * everything below is made anew for it — the modules above, already loaded, are what a start no longer pays for.
 */
let current;
function begin(data) {
  opened.length = 0;
  const path = data?.path;
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
  data?.port?.on("message", serve(data.port));
  current = { stop };
  parentPort.postMessage({ ready: true });
}
begin(workerData);
