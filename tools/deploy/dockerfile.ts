/**
 * deploy/Dockerfile read into stages of instructions: for the tests that check it, and for
 * the benchmarks, which start ferry with the runtime stage's environment.
 */

export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** Instructions per stage, continuation lines joined and comments dropped. */
export function parseDockerfile(
  text: string,
): { name: string; from: string; body: Instruction[] }[] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith('#'));
  const args = new Map<string, string>();
  const stages: { name: string; from: string; body: Instruction[] }[] = [];
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const argText = rest.join(' ');
    if (keyword === 'ARG' && stages.length === 0) {
      const [name, value = ''] = argText.split('=');
      if (name) args.set(name, value);
    } else if (keyword === 'FROM') {
      const [image = '', , name = ''] = argText.split(/\s+/);
      const from = image.replace(/\$\{(\w+)\}/g, (_m, arg: string) => args.get(arg) ?? '');
      stages.push({ name, from, body: [] });
    } else {
      stages.at(-1)?.body.push({ keyword: keyword.toUpperCase(), args: argText });
    }
  }
  return stages;
}

/** The `ENV key=value` pairs of a stage (only the `=` form, the one deploy/Dockerfile uses). */
export function stageEnv(
  stage: { body: readonly Instruction[] } | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const instruction of stage?.body ?? []) {
    if (instruction.keyword !== 'ENV') continue;
    for (const pair of instruction.args.split(/\s+/)) {
      const [key, value] = pair.split(/=(.*)/s, 2);
      if (!key || value === undefined)
        throw new Error(`ENV without key=value: ${instruction.args}`);
      env[key] = value;
    }
  }
  return env;
}
