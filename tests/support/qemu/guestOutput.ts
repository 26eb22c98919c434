import { MARK } from "./initramfs.ts";

/**
 * What the guest printed on its serial console, read back: the script's sections (initramfs.ts
 * `section NAME argv…`) with their output and exit codes, the modules insmod refused, and the
 * script's own exit status. Kernel messages may fall between the lines; only marked lines and
 * what lies between a section's markers are read.
 */

export interface GuestSection {
  name: string;
  output: string;
  code: number;
}

export interface GuestOutput {
  /** The whole console, line ends normalised. */
  console: string;
  /** In the order the script ran them; a name used twice appears twice. */
  sections: GuestSection[];
  insmodFailed: string[];
  /** The script's exit status; null when the guest never got to its end (panic, timeout). */
  scriptExit: number | null;
}

export function parseGuestOutput(raw: string): GuestOutput {
  // The serial line ends lines with \r\n, and a tty may double the \r.
  const console = raw.replace(/\r+\n?/g, "\n");
  const sections: GuestSection[] = [];
  const insmodFailed: string[] = [];
  let scriptExit: number | null = null;
  let open: { name: string; lines: string[] } | null = null;
  for (const line of console.split("\n")) {
    // A marker may follow other text on its line (the firmware's escape codes before the first).
    const at = line.indexOf(`${MARK} `);
    if (at < 0) {
      open?.lines.push(line);
      continue;
    }
    const [kind, ...rest] = line.slice(at + MARK.length + 1).trim().split(/\s+/);
    if (kind === "begin" && rest[0]) open = { name: rest[0], lines: [] };
    else if (kind === "end" && open && rest[0] === open.name) {
      sections.push({ name: open.name, output: open.lines.join("\n"), code: Number(rest[1]) });
      open = null;
    } else if (kind === "insmod-failed" && rest[0]) insmodFailed.push(rest[0]);
    else if (kind === "script-end") scriptExit = Number(rest[0]);
  }
  return { console, sections, insmodFailed, scriptExit };
}

/** The one section of that name (throws, with the console's tail, when there is none or several). */
export function section(out: GuestOutput, name: string): GuestSection {
  const found = out.sections.filter((s) => s.name === name);
  if (found.length !== 1) throw new Error(`guest section ${name}: found ${found.length}; console ends:\n${out.console.slice(-3000)}`);
  return found[0]!;
}
