// Secrets an agent's transcript and logs must never show: the values of
// secret-looking environment variables, and the credentials in a repo
// user's home (git token, agent logins). Pure, except secretValues, which
// reads the home through the port it is given.
/** Files in a repo user's home that hold credentials (mode 0600, never elsewhere). */
export const SECRET_FILES: readonly string[] = ['.git-credentials', '.claude/.credentials.json', '.codex/auth.json', '.config/gh/hosts.yml'];

const SECRET_KEY = /token|secret|key|password|credential/i;
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
      for (const match of text.matchAll(/(\w*(?:token|secret|key|password)\w*)\W+([A-Za-z0-9._~+/=-]{8,})/gi)) found.add(match[2]!);
    }
  } else {
    for (const match of text.matchAll(/^\s*[\w-]*(?:token|secret|key|password)[\w-]*\s*:\s*["']?([^"'\s]+)/gim)) found.add(match[1]!);
  }
  return [...found].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
}

function collect(value: unknown, underSecretKey: boolean, into: Set<string>): void {
  if (typeof value === 'string') {
    if (underSecretKey) into.add(value);
  } else if (Array.isArray(value)) {
    for (const item of value) collect(item, underSecretKey, into);
  } else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) collect(inner, underSecretKey || SECRET_KEY.test(key), into);
  }
}

/** Every known secret of a repo user, read from its home (files that do not exist are skipped). */
export async function secretValues(fs: { readTextIfExists(path: string): Promise<string | undefined> }, home: string): Promise<string[]> {
  const all = new Set<string>();
  for (const file of SECRET_FILES) {
    const text = await fs.readTextIfExists(`${home}/${file}`);
    if (text !== undefined) for (const secret of extractSecrets(file, text)) all.add(secret);
  }
  return [...all];
}

/** The text with every occurrence of every secret replaced by [redacted]. Pure. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...new Set(secrets)].filter((secret) => secret.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  let result = text;
  for (const secret of ordered) result = result.split(secret).join('[redacted]');
  return result;
}

/** Variable values that must never appear in a transcript or a log. */
export function secretValuesIn(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env)
    .filter(([key, value]) => /TOKEN|KEY|SECRET|PASSWORD/i.test(key) && value.length >= 8)
    .map(([, value]) => value);
}

/** Every secret known for an agent: its environment's and its home's. */
export async function knownSecrets(fs: { readTextIfExists(path: string): Promise<string | undefined> }, env: Readonly<Record<string, string>>): Promise<string[]> {
  return [...new Set([...secretValuesIn(env), ...(env.HOME ? await secretValues(fs, env.HOME) : [])])];
}
