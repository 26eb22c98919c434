/**
 * The thread that imports an experiment file first, on behalf of loadProbe.ts: a file whose
 * top level never finishes (a loop, a promise never settled) hangs this thread, which the main
 * thread terminates, instead of hanging latlab. Module hooks are per thread, so this thread
 * registers for itself what bin/latlab.js registers for the main one: "latlab" resolves to this
 * copy, and TypeScript loads through tsx.
 */
import { parentPort } from "node:worker_threads";
import { pathToFileURL } from "node:url";

const port = parentPort;
if (!port) throw new Error("loadProbe.worker.ts runs only as a worker thread (see loadProbe.ts)");

// This file sits in src/cli/experiments (a checkout) or dist/cli/experiments (the package), two levels below the entry it serves.
const entry = new URL(import.meta.url.endsWith(".ts") ? "../../index.ts" : "../../index.js", import.meta.url).href;
const ownRoot = new URL("../../../", import.meta.url).href;
// The same hooks as bin/latlab.js registers for the main thread (one module for both).
// @ts-expect-error: plain JavaScript without declarations, shipped in bin/ beside latlab.js.
const { registerExperimentHooks } = await import("../../../bin/experimentHooks.js");
await registerExperimentHooks(entry, ownRoot);

/** One file at a time: the reply says the import settled; what it threw the main thread sees again. */
port.on("message", async (file: string) => {
  try {
    await import(pathToFileURL(file).href);
  } catch {
    // The main thread's own import throws the same error, with the file named (importExperiment).
  }
  port.postMessage(file);
});
port.postMessage(null);
