// What a broker needs to serve one repo: for each provider the repo uses, the
// one origin its requests go to, the path of the key file (never the key),
// and how the key is presented; the body cap; the broker's own uid (the key
// files' owner). Checked whole, every problem at once. Pure.
import { PROVIDERS, type KeyKind } from './providers.js';
import type { Provider } from './types.js';

export interface ProviderSettings {
  /** scheme://host[:port]: the one upstream for this provider. */
  readonly origin: string;
  /** Absolute path of a 0600 file holding the key. */
  readonly keyFile: string;
  readonly keyKind: KeyKind;
}

export interface BrokerRepo {
  readonly repo: string;
  readonly providers: Readonly<Partial<Record<Provider, ProviderSettings>>>;
  /** Larger request bodies are refused (413) before anything is forwarded. */
  readonly maxBodyBytes: number;
  /** The broker's own uid: a key file must be owned by it. */
  readonly brokerUid: number;
}

/** Anthropic's own request limit for the Messages API. */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;
/** The bounds a body cap may be set within (the registry's max_body_bytes). */
export const MIN_BODY_BYTES = 1024;
export const MAX_BODY_BYTES = 256 * 1024 * 1024;

/** Pure: what is wrong with an upstream origin (or a proxy URL), or undefined. */
export function originProblem(text: string, what: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${what} ${JSON.stringify(text)} is not a URL`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${what} ${text} must be http:// or https://`;
  if (url.username || url.password) return `${what} ${text} must not carry a user or password`;
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || text.endsWith('/'))
    return `${what} ${text} must be scheme://host[:port] and nothing more`;
  return undefined;
}

/** Pure: every problem of a repo's broker settings; [] when it may be served. */
export function brokerRepoProblems(repo: BrokerRepo): string[] {
  const problems: string[] = [];
  const where = `broker settings for repo ${JSON.stringify(repo.repo)}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(repo.repo)) problems.push(`${where}: the repo name is malformed`);
  const configured = PROVIDERS.filter((provider) => repo.providers[provider] !== undefined);
  if (configured.length === 0) problems.push(`${where}: no provider has a key file; name one (anthropic or openai)`);
  for (const provider of configured) {
    const settings = repo.providers[provider]!;
    const origin = originProblem(settings.origin, `${where}: ${provider} origin`);
    if (origin) problems.push(origin);
    if (!settings.keyFile.startsWith('/'))
      problems.push(`${where}: ${provider} key file ${JSON.stringify(settings.keyFile)} must be an absolute path`);
    if (settings.keyKind !== 'api-key' && !(provider === 'anthropic' && settings.keyKind === 'subscription-token'))
      problems.push(
        `${where}: ${provider} key kind ${settings.keyKind} is not one of api-key${provider === 'anthropic' ? ', subscription-token' : ''}`,
      );
  }
  if (!Number.isInteger(repo.maxBodyBytes) || repo.maxBodyBytes < MIN_BODY_BYTES || repo.maxBodyBytes > MAX_BODY_BYTES)
    problems.push(
      `${where}: the body cap ${repo.maxBodyBytes} must be a whole number of bytes from ${MIN_BODY_BYTES} to ${MAX_BODY_BYTES}`,
    );
  if (!Number.isInteger(repo.brokerUid) || repo.brokerUid < 0) problems.push(`${where}: the broker uid is malformed`);
  return problems;
}

/** The providers a repo's broker forwards for. */
export function configuredProviders(repo: BrokerRepo): Provider[] {
  return PROVIDERS.filter((provider) => repo.providers[provider] !== undefined);
}
