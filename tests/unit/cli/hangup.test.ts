import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ignoreHangupWriteErrors, isHangupWriteError, onWriteError } from "../../../src/cli/output/hangup.ts";

const errno = (code: string) => Object.assign(new Error(`write ${code}`), { code });

describe("write errors after a hang-up", () => {
  it("EIO, EPIPE and a stream destroyed by them are ignored; anything else still surfaces", () => {
    for (const code of ["EIO", "EPIPE", "ERR_STREAM_DESTROYED"]) {
      expect(isHangupWriteError(errno(code))).toBe(true);
      expect(() => onWriteError(errno(code))).not.toThrow();
    }
    expect(isHangupWriteError(errno("ENOSPC"))).toBe(false);
    expect(isHangupWriteError(null)).toBe(false);
    expect(() => onWriteError(errno("ENOSPC"))).toThrow("write ENOSPC");
  });

  it("a stream whose writes fail with EIO emits no unhandled error once guarded, and is guarded once", async () => {
    const tty = new Writable({ write: (_chunk, _enc, cb) => cb(errno("EIO")) });
    ignoreHangupWriteErrors(tty);
    ignoreHangupWriteErrors(tty);
    expect(tty.listenerCount("error")).toBe(1);
    await new Promise<void>((resolve) => {
      tty.write("results: …\n");
      tty.write("more\n");
      setTimeout(resolve, 20);
    });
    expect(tty.destroyed).toBe(true);
  });
});
