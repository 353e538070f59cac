// A webhook's URL out of error text. The URL often is the secret (a Slack
// incoming webhook's path, a token in the query), so it is never printed
// whole: every log line, --json output and error shows its scheme and host
// only (redactUrl, with the registry's rule of what a webhook URL may be).
// Pure.
import { redactUrl } from '../registry/index.js';

export { redactUrl, webhookUrlProblem } from '../registry/index.js';

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
