// The real promtool (Debian's prometheus package; provision/install-packages.sh installs it) judging a scrape, and
// a small reader of the text format for the values a test asserts.
import { spawnSync } from 'node:child_process';

export const PROMTOOL = '/usr/bin/promtool';

/** `promtool check metrics` on a body: its exit code and what it said (empty when the body is clean). */
export function promtoolCheck(body: string): { code: number | null; said: string } {
  const result = spawnSync(PROMTOOL, ['check', 'metrics'], { input: body, encoding: 'utf8', timeout: 30_000 });
  if (result.error) throw result.error;
  return { code: result.status, said: `${result.stdout}${result.stderr}`.trim() };
}

/** `name{labels}` -> value for every sample line (labels as written). */
export function samples(body: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of body.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/** GET a loopback URL: its status, content type and body. */
export async function scrape(port: number, path = '/metrics'): Promise<{ status: number; type: string; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: await response.text() };
}
