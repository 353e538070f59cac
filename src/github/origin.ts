// Which GitHub repository a checkout is, from its origin URL, and where its
// API lives. Pure. The three URL shapes git accepts for GitHub: https
// (optionally with a user), ssh:// and the scp-like git@host:owner/repo.
import type { RepoSlug } from './api.js';

export interface GitHubOrigin extends RepoSlug {
  /** The host the clone talks to (github.com or a GitHub Enterprise server). */
  readonly host: string;
}

const NAME = /^[A-Za-z0-9_.-]+$/;

function slugFrom(host: string, path: string): GitHubOrigin | undefined {
  const parts = path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .split('/');
  if (parts.length !== 2) return undefined;
  const [owner, repo] = parts as [string, string];
  if (!NAME.test(owner) || !NAME.test(repo) || /^\.+$/.test(owner) || /^\.+$/.test(repo)) return undefined;
  return { host: host.toLowerCase(), owner, repo };
}

/** owner/repo and host of an origin URL; undefined when it is not a GitHub-shaped URL (a local path, say). */
export function parseOrigin(url: string): GitHubOrigin | undefined {
  const trimmed = url.trim();
  const scp = /^(?:[A-Za-z0-9_.-]+@)?([A-Za-z0-9.-]+):(?!\/\/)(.+)$/.exec(trimmed);
  if (scp && !/^[A-Za-z]+:\/\//.test(trimmed)) return slugFrom(scp[1]!, scp[2]!);
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    return undefined;
  }
  if (!['https:', 'http:', 'ssh:', 'git+ssh:', 'ssh+git:'].includes(parsed.protocol) || !parsed.hostname)
    return undefined;
  return slugFrom(parsed.hostname, decodeURIComponent(parsed.pathname));
}

/** The API root: the configured one (GitHub Enterprise, tests), else github.com's, else the server's /api/v3. */
export function apiBaseUrl(host: string, configured: string | undefined): string {
  if (configured) return configured.replace(/\/+$/, '');
  return host === 'github.com' ? 'https://api.github.com' : `https://${host}/api/v3`;
}

/** Pure: a problem with a configured API URL, or undefined when it is usable. */
export function apiUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not carry credentials (the token comes from the credential store)';
  if (url.search || url.hash) return 'must not have a query or fragment';
  return undefined;
}
