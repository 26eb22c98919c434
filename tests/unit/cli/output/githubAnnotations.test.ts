import { describe, expect, it } from "vitest";
import { annotation, diagnosticLine, escapeData, escapeProperty, inGithubActions } from "../../../../src/cli/output/githubAnnotations.ts";

/**
 * The runner's side, as actions/runner src/Runner.Common/ActionCommand.cs @ 258d6c8 does it: the
 * data after the second `::`, with %0D, %0A, then %25 replaced in that order (UnescapeData).
 */
function runnerParse(line: string): { command: string; properties: Record<string, string>; data: string } {
  expect(line.startsWith("::")).toBe(true);
  const end = line.indexOf("::", 2);
  const info = line.slice(2, end);
  const space = info.indexOf(" ");
  const unescapeData = (s: string) => s.replaceAll("%0D", "\r").replaceAll("%0A", "\n").replaceAll("%25", "%");
  const unescapeProperty = (s: string) => unescapeData(s.replaceAll("%3A", ":").replaceAll("%2C", ","));
  const properties: Record<string, string> = {};
  if (space > 0) {
    for (const pair of info.slice(space + 1).split(",")) {
      const [k, v] = pair.split(/=(.*)/s);
      properties[k!] = unescapeProperty(v!);
    }
  }
  return { command: space < 0 ? info : info.slice(0, space), properties, data: unescapeData(line.slice(end + 2)) };
}

describe("GitHub workflow commands for annotations", () => {
  it("escapes %, CR and LF in the message, `%` first; a property also escapes `:` and `,`", () => {
    expect(escapeData("100% done\r\nnext %0A")).toBe("100%25 done%0D%0Anext %250A");
    expect(escapeProperty("latlab: ci-matrix, plan")).toBe("latlab%3A ci-matrix%2C plan");
    expect(annotation("error", "a\nb", "t: x")).toBe("::error title=t%3A x::a%0Ab");
    expect(annotation("warning", "w")).toBe("::warning::w");
  });

  it("the runner reads back exactly the text, on one line, however it is made", () => {
    for (const text of ["plain", "two\nlines", "cr\r\nlf", "50% of $10", "literal %0A and %25", ":: not a command ::", "a,b:c"]) {
      const line = annotation("error", text, "latlab, ci-matrix: plan");
      expect(line).not.toMatch(/[\r\n]/);
      expect(runnerParse(line)).toEqual({ command: "error", properties: { title: "latlab, ci-matrix: plan" }, data: text });
    }
  });

  it("an annotation in GitHub Actions, a plain line elsewhere; escape sequences never reach either", () => {
    expect(diagnosticLine("error", "x refused: 5%\nnext", { githubActions: true, title: "latlab ci-matrix" })).toBe("::error title=latlab ci-matrix::x refused: 5%25%0Anext\n");
    expect(diagnosticLine("warning", "careful", { githubActions: false })).toBe("warning: careful\n");
    expect(diagnosticLine("error", "bad \u001b[31mred\u001b[0m name", { githubActions: true })).toBe("::error::bad red name\n");
    expect(inGithubActions({ GITHUB_ACTIONS: "true" })).toBe(true);
    expect(inGithubActions({ GITHUB_ACTIONS: "false" })).toBe(false);
    expect(inGithubActions({})).toBe(false);
  });
});
