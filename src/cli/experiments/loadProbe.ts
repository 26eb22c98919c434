import { Worker } from "node:worker_threads";
import { z } from "zod";

/**
 * A time limit on a user's experiment file. Importing it runs its top level in latlab's own
 * thread, where a loop (`while (true) {}`) or a wait that never ends would hang every command
 * that reads it (`plan`, `run`, `list` of a whole folder) beyond any signal's reach. So the file
 * is imported first in a worker thread (loadProbe.worker.ts), which is terminated when it does
 * not finish in time; only a file that finished there is imported for real. An experiment holds
 * functions (hosts, filter), which no thread can send to another: hence a probe, not a loader.
 */
export const DEFAULT_LOAD_TIMEOUT_MS = 20_000;
export const LOAD_TIMEOUT_ENV = "LATLAB_LOAD_TIMEOUT_MS";

const Millis = z.string().regex(/^[1-9][0-9]{0,8}$/, "a whole number of milliseconds, in decimal digits");

/** The limit: LATLAB_LOAD_TIMEOUT_MS when set (tests shorten it), else 20 s. */
export function loadTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[LOAD_TIMEOUT_ENV];
  if (raw === undefined || raw === "") return DEFAULT_LOAD_TIMEOUT_MS;
  const parsed = Millis.safeParse(raw);
  if (!parsed.success) throw new Error(`${LOAD_TIMEOUT_ENV}="${raw}": expected ${parsed.error.issues[0]!.message}`);
  return Number(parsed.data);
}

const WORKER = new URL(import.meta.url.endsWith(".ts") ? "./loadProbe.worker.ts" : "./loadProbe.worker.js", import.meta.url);

/**
 * One worker for every file a command loads (`list` loads them all): it pays for loading latlab
 * and tsx once. Unreferenced, so an idle worker never keeps latlab alive; the time limit's timer
 * keeps it alive while a file loads.
 */
let current: { worker: Worker; ready: Promise<void> } | undefined;

function probeWorker(): { worker: Worker; ready: Promise<void> } {
  if (current) return current;
  const worker = new Worker(WORKER);
  worker.unref();
  const ready = new Promise<void>((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`the thread that loads experiment files ended (exit code ${code}) before it was ready`));
    worker.once("error", reject);
    worker.once("exit", onExit);
    worker.once("message", () => {
      worker.off("error", reject);
      worker.off("exit", onExit);
      resolve();
    });
  });
  const made = { worker, ready };
  current = made;
  // An error thrown later by a file's timers ends the worker; unheard, it would end latlab.
  worker.on("error", () => {});
  // A worker that ended for any reason is never reused.
  worker.once("exit", () => {
    if (current === made) current = undefined;
  });
  return made;
}

const seconds = (ms: number) => (ms % 1000 ? `${ms} ms` : `${ms / 1000} s`);

/**
 * Resolves once `file` finished loading in the worker (or threw: the real import says what),
 * rejects naming the file when it did not finish within `timeoutMs` or ended the thread.
 */
export async function probeLoad(file: string, timeoutMs = loadTimeoutMs()): Promise<void> {
  const { worker, ready } = probeWorker();
  await ready;
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      worker.off("message", onMessage);
      worker.off("exit", onExit);
      worker.off("error", onError);
      if (error) reject(error);
      else resolve();
    };
    const onMessage = (loaded: unknown) => {
      if (loaded === file) done();
    };
    const onExit = (code: number) => done(new Error(`${file}: ended the process while loading (exit code ${code}), so it was not loaded; an experiment file only defines an experiment`));
    const onError = (error: Error) => done(new Error(`${file}: could not load: ${error.message}`, { cause: error }));
    const timer = setTimeout(() => {
      // Terminating stops even a loop that never yields; the next file gets a new worker, at
      // once: this one's "exit" comes later.
      if (current?.worker === worker) current = undefined;
      void worker.terminate();
      done(new Error(`${file}: did not finish loading within ${seconds(timeoutMs)} (a loop, or a wait that never ends, at its top level?), so it was not loaded; ${LOAD_TIMEOUT_ENV} sets the limit in milliseconds`));
    }, timeoutMs);
    worker.on("message", onMessage);
    worker.once("exit", onExit);
    worker.once("error", onError);
    worker.postMessage(file);
  });
}
