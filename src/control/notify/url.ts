// A webhook's URL: what it may be, and how it is shown. The URL often is the
// secret (a Slack incoming webhook's path, a token in the query), so it is
// never printed whole: every log line, --json output and error shows its
// scheme and host only. Pure.

/** Hosts an http:// webhook may name: root's own loopback, where no network sees the body. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

function isLoopback(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** The URL as it may be shown: scheme://host[:port]/… (path, query, user and password hidden). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const hidden = parsed.pathname !== '/' || parsed.search !== '' || parsed.username !== '' || parsed.hash !== '';
    return `${parsed.protocol}//${parsed.host}/${hidden ? '…' : ''}`;
  } catch {
    return '(not a URL)';
  }
}

/** Text (an error message) with the URL, its path and its query taken out. */
export function withoutUrl(text: string, url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  const secrets = [url, parsed?.href, parsed && parsed.pathname.length > 1 ? parsed.pathname : undefined]
    .concat(parsed && parsed.search.length > 1 ? [parsed.search] : [])
    .filter((part): part is string => part !== undefined && part.length > 0)
    .sort((a, b) => b.length - a.length);
  let result = text;
  for (const secret of secrets) result = result.split(secret).join(redactUrl(url));
  return result;
}

/** Why `url` cannot be a webhook, or undefined when it can: https anywhere, or http to loopback only. */
export function webhookUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.username !== '' || parsed.password !== '')
    return `carries a user or password (${redactUrl(url)}): put a token in the path or query instead`;
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:')
    return isLoopback(parsed.hostname)
      ? undefined
      : `is plain http to ${parsed.host}: the body and the URL's token would cross the network readable`;
  return `has scheme ${parsed.protocol.replace(/:$/, '')}, not https`;
}
