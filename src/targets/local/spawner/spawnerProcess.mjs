// latlab's command spawner: a small Node process in a session of its own (see sessionSpawner.ts).
// Plain JavaScript so that it starts without a TypeScript loader, from src/ and from dist/ alike.
//
// It starts each command it is asked for in a process group (and session) of that command's own,
// streams its output back over the IPC channel, signals its group on request, and reports how it
// ended. It never opens anything itself, and it exits when latlab goes away: the commands it
// started are left to finish, as they would be if latlab had started them.
import { spawn } from "node:child_process";

/** Commands running, by latlab's request id. */
const running = new Map();

const send = (message) => {
  if (process.connected) process.send(message);
};

process.on("message", (message) => {
  if (message.type === "spawn") start(message);
  else if (message.type === "signal") {
    const child = running.get(message.id);
    if (child?.pid === undefined) return;
    try {
      process.kill(-child.pid, message.signal);
    } catch {
      // Already gone.
    }
  }
});
process.on("disconnect", () => process.exit(0));

function start({ id, file, args, env }) {
  let child;
  try {
    child = spawn(file, args, { detached: true, stdio: ["ignore", "pipe", "pipe"], env });
  } catch (error) {
    send({ id, type: "error", code: error.code, message: error.message });
    return;
  }
  running.set(id, child);
  child.stdout.on("data", (data) => send({ id, type: "stdout", data }));
  child.stderr.on("data", (data) => send({ id, type: "stderr", data }));
  child.on("error", (error) => {
    // Could not start (no pid); other errors (a failed kill) change nothing.
    if (child.pid !== undefined) return;
    running.delete(id);
    send({ id, type: "error", code: error.code, message: error.message });
  });
  child.on("close", (code, signal) => {
    running.delete(id);
    send({ id, type: "close", code, signal });
  });
}

send({ type: "ready" });
