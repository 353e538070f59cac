// Secrets an agent's transcript and logs must never show: the values of
// secret-looking environment variables, the credentials in a repo user's
// home (git token, agent logins), and any broker capability token, known or
// not (the runner never holds one, but an agent can print its own). Pure,
// except secretValues, which reads the home through the port it is given.
import { TOKEN_SHAPE } from '../broker/capabilities.js';

/** Files in a repo user's home that hold credentials (mode 0600, never elsewhere). */
const SECRET_FILES: readonly string[] = [
  '.git-credentials',
  '.claude/.credentials.json',
  '.codex/auth.json',
  '.config/gh/hosts.yml',
];

/**
 * The words that mark a name (an environment variable, a JSON key, a
 * `key: value` line) as holding a secret. The union of what each place used
 * to check on its own: redacting one value too many costs a word in a log,
 * missing one leaks a credential. Not broader: "auth" would catch
 * GIT_AUTHOR_NAME, "pass" bypass/passthrough, "pwd" the working directory.
 */
const SECRET_WORDS = ['token', 'secret', 'key', 'password', 'passwd', 'credential'] as const;
const SECRET_WORD = `(?:${SECRET_WORDS.join('|')})`;

/** A name that holds a secret: used for redaction here and by the registry to keep secrets out of its env tables. */
export const SECRET_NAME = new RegExp(SECRET_WORD, 'i');
/** A secret-named key and its value anywhere in text that should have been JSON. */
const SECRET_PAIR = new RegExp(`(\\w*${SECRET_WORD}\\w*)\\W+([A-Za-z0-9._~+/=-]{8,})`, 'gi');
/** A `secret-named-key: value` line (YAML such as gh's hosts.yml). */
const SECRET_LINE = new RegExp(`^\\s*[\\w-]*${SECRET_WORD}[\\w-]*\\s*:\\s*["']?([^"'\\s]+)`, 'gim');

/** Shorter strings would redact ordinary words; real tokens are long. */
const MIN_SECRET_LENGTH = 8;

/** The secret strings in one credentials file's text. Pure. */
export function extractSecrets(file: string, text: string): string[] {
  const found = new Set<string>();
  if (file.endsWith('.git-credentials')) {
    // https://user:TOKEN@host, one a line.
    for (const line of text.split('\n')) {
      const match = /^[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:([^@\s]+)@/i.exec(line.trim());
      if (match) found.add(decodeURIComponent(match[1]!));
    }
  } else if (file.endsWith('.json')) {
    try {
      collect(JSON.parse(text), false, found);
    } catch {
      // Not JSON after all: fall back to key: value lines.
      for (const match of text.matchAll(SECRET_PAIR)) found.add(match[2]!);
    }
  } else {
    for (const match of text.matchAll(SECRET_LINE)) found.add(match[1]!);
  }
  return [...found].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
}

function collect(value: unknown, underSecretKey: boolean, into: Set<string>): void {
  if (typeof value === 'string') {
    if (underSecretKey) into.add(value);
  } else if (Array.isArray(value)) {
    for (const item of value) collect(item, underSecretKey, into);
  } else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) collect(inner, underSecretKey || SECRET_NAME.test(key), into);
  }
}

/** Every known secret of a repo user, read from its home (files that do not exist are skipped). */
export async function secretValues(
  fs: { readTextIfExists(path: string): Promise<string | undefined> },
  home: string,
): Promise<string[]> {
  const all = new Set<string>();
  for (const file of SECRET_FILES) {
    const text = await fs.readTextIfExists(`${home}/${file}`);
    if (text !== undefined) for (const secret of extractSecrets(file, text)) all.add(secret);
  }
  return [...all];
}

/** A capability token anywhere in text: TOKEN_SHAPE without its anchors, so the token's shape is said once. */
const CAPABILITY_TOKEN = new RegExp(TOKEN_SHAPE.source.replace(/^\^/, '').replace(/\$$/, ''), 'g');

/** The text with every occurrence of every secret, and every capability token, replaced by [redacted]. Pure. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...new Set(secrets)]
    .filter((secret) => secret.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
  let result = text;
  for (const secret of ordered) result = result.split(secret).join('[redacted]');
  return result.replace(CAPABILITY_TOKEN, '[redacted]');
}

/** A sink's redaction, bound to the secrets it knows. */
export type Redact = (text: string) => string;

/** redactSecrets bound to a list: what every sink (progress, summaries, records, commit messages) is given. */
export function redactor(secrets: readonly string[]): Redact {
  return (text) => redactSecrets(text, secrets);
}

/**
 * A JSON-shaped value (an event, a summary, a record, a plan) with every
 * string in it, keys too, redacted by redactSecrets: one walk for every
 * structured sink, so no field is forgotten. Pure.
 */
export function redactDeep<T>(value: T, secrets: readonly string[]): T {
  // No known secret still leaves the capability tokens to find: the walk always runs.
  const walk = (inner: unknown): unknown => {
    if (typeof inner === 'string') return redactSecrets(inner, secrets);
    if (Array.isArray(inner)) return inner.map(walk);
    if (inner && typeof inner === 'object' && Object.getPrototypeOf(inner) === Object.prototype) {
      return Object.fromEntries(Object.entries(inner).map(([key, item]) => [redactSecrets(key, secrets), walk(item)]));
    }
    return inner;
  };
  return walk(value) as T;
}

/** Variable values that must never appear in a transcript or a log. */
function secretValuesIn(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env)
    .filter(([key, value]) => SECRET_NAME.test(key) && value.length >= MIN_SECRET_LENGTH)
    .map(([, value]) => value);
}

/** Every secret known for an agent: its environment's and its home's. */
export async function knownSecrets(
  fs: { readTextIfExists(path: string): Promise<string | undefined> },
  env: Readonly<Record<string, string>>,
): Promise<string[]> {
  return [...new Set([...secretValuesIn(env), ...(env.HOME ? await secretValues(fs, env.HOME) : [])])];
}
