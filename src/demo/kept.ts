// What `demo --keep` prints last: the commands that look at what it kept,
// each with the environment it needs. The demo keeps its drain's records and
// root's side (the ledger) in its own state dir, so a plain `agent-runner
// logs --workspace ...` afterwards would look in the caller's default state
// dir and find nothing: every command names its state. Pure.

export interface KeptDemo {
  /** The agent-runner program to print (this one's path). */
  readonly bin: string;
  readonly clone: string;
  /** The demo's AGENT_RUNNER_STATE: the drain's records (transcripts, drain history) and root's side (the ledger). */
  readonly state: string;
  /** A registry naming the kept repo, for the dashboard. */
  readonly registry: string;
  /** A task whose transcript is there to read. */
  readonly task: string;
  readonly repo: string;
}

/** Pure: a word as the shell reads it back unchanged: as is when plain, else in single quotes. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Pure: one command line per look, with what each shows. */
export function keptCommands(kept: KeptDemo): { readonly what: string; readonly line: string }[] {
  const line = (env: Record<string, string>, ...args: string[]) =>
    [
      ...Object.entries(env).map(([key, value]) => `${key}=${shellWord(value)}`),
      ...[kept.bin, ...args].map(shellWord),
    ].join(' ');
  const drain = { AGENT_RUNNER_STATE: kept.state };
  return [
    { what: `${kept.task}'s transcript`, line: line(drain, 'logs', '--workspace', kept.clone, kept.task) },
    {
      what: 'the run history',
      line: line({ AGENT_RUNNER_CONFIG: kept.registry, ...drain }, 'runs', '--repo', kept.repo),
    },
    { what: 'the staging branch', line: line(drain, 'status', '--workspace', kept.clone) },
    { what: 'the ledger', line: line(drain, 'ledger', kept.repo, '--by', 'task') },
    {
      what: 'the dashboard',
      line: line({ AGENT_RUNNER_CONFIG: kept.registry, ...drain }, 'tui'),
    },
  ];
}

/** Pure: the registry the dashboard reads: the kept clone as the one repo. */
export function keptRegistry(repo: string, clone: string): string {
  return `# The demo's repo, for "agent-runner tui" (no watcher runs for it).\n[repos.${repo}]\npath = ${JSON.stringify(clone)}\nproxy_port = 700\n`;
}
