/**
 * What started a run: GitHub Actions' event name (`schedule`, `workflow_dispatch`, `push`,
 * `pull_request`…) when it ran there, else `local`. GitHub sets GITHUB_EVENT_NAME, "the name of
 * the event that triggered the workflow", for every step
 * (https://docs.github.com/en/actions/reference/variables-reference#default-environment-variables);
 * src/cli/run/provenance.ts records it as the `github.event` fact, so the event is read from the
 * facts — for a results.json made before the event had a field of its own too.
 */
export const GITHUB_EVENT_FACT = "github.event";
export const LOCAL_EVENT = "local";

/** The event of a run whose facts are `facts`: its GitHub event, else `local`. */
export function eventOfFacts(facts: Readonly<Record<string, string>>): string {
  return facts[GITHUB_EVENT_FACT] || LOCAL_EVENT;
}
