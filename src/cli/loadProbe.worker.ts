/**
 * The thread that imports an experiment file first, on behalf of loadProbe.ts: a file whose
 * top level never finishes (a loop, a promise never settled) hangs this thread, which the main
 * thread terminates, instead of hanging latlab. Module hooks are per thread, so this thread
 * registers for itself what bin/latlab.js registers for the main one: "latlab" resolves to this
 * copy, and TypeScript loads through tsx.
 */
import { registerHooks } from "node:module";
import { parentPort } from "node:worker_threads";
import { pathToFileURL } from "node:url";

const port = parentPort;
if (!port) throw new Error("loadProbe.worker.ts runs only as a worker thread (see loadProbe.ts)");

// This file sits in src/cli (a checkout) or dist/cli (the package), next to the entry it serves.
const entry = new URL(import.meta.url.endsWith(".ts") ? "../index.ts" : "../index.js", import.meta.url).href;
const ownRoot = new URL("../../", import.meta.url).href;
// The same rule as bin/latlab.js: the user's own latlab when it resolves elsewhere, else this copy.
registerHooks({
  resolve(specifier, context, next) {
    if (specifier !== "latlab") return next(specifier, context);
    try {
      const resolved = next(specifier, context);
      if (!resolved.url.startsWith(ownRoot)) return resolved;
    } catch {
      // Not resolvable from there: this copy it is.
    }
    return { url: entry, shortCircuit: true, format: "module" };
  },
});
const { register } = await import("tsx/esm/api");
register();

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
