import { vi } from "vitest";
import { main } from "../../../src/cli/main.ts";

/** main() in this process, with what it writes to stdout and stderr. */
export async function runMain(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: "", stderr: "" };
  const spies = (["stdout", "stderr"] as const).map((stream) =>
    vi.spyOn(process[stream], "write").mockImplementation((chunk: string | Uint8Array) => {
      out[stream] += String(chunk);
      return true;
    }),
  );
  try {
    return { code: await main(args), ...out };
  } finally {
    for (const s of spies) s.mockRestore();
  }
}
