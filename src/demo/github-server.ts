// What `demo --github` needs from a local GitHub: a server on 127.0.0.1
// that answers the REST endpoints promote --pr uses. src/io/demo-github.ts
// is the real one (the composition root wires it); the demo drives it
// through this interface: its branches are the demo's bare origin, and the
// demo decides when "CI" reports on a commit.

export interface DemoGitHubRemote {
  /** The sha of a branch on the demo's origin, undefined when absent. */
  branchSha(branch: string): Promise<string | undefined>;
  /** Merges head into base on the origin (a merge commit); returns the new base sha. */
  merge(base: string, head: string): Promise<string>;
}

export interface DemoGitHubServer {
  /** API root, http://127.0.0.1:PORT. */
  readonly baseUrl: string;
  /** Sets the one check run ("demo-ci") on a commit. */
  setCheck(sha: string, status: 'in_progress' | 'completed', conclusion: 'success' | 'failure' | null): void;
  close(): Promise<void>;
}

export type StartDemoGitHub = (options: {
  owner: string;
  repo: string;
  token: string;
  remote: DemoGitHubRemote;
}) => Promise<DemoGitHubServer>;
