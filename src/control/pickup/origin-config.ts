// The clone's origin URL, read from its .git/config as data: the webhook
// receiver runs no git. Only the plain shape git itself writes is read
// (`[remote "origin"]` then `url = ...`); an origin set through an include
// or an insteadOf rewrite is not seen, and the registry's `url` (root's,
// preferred anyway) names the repo instead. Pure.

/** The first url of [remote "origin"], or undefined. */
export function originUrlFromGitConfig(text: string): string | undefined {
  let inOrigin = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) {
      inOrigin = /^\[\s*remote\s+"origin"\s*\]$/i.test(line);
      continue;
    }
    if (!inOrigin) continue;
    const match = /^url\s*=\s*(.*)$/i.exec(line);
    if (!match) continue;
    let value = match[1]!.trim();
    if (value.startsWith('"')) {
      const end = value.indexOf('"', 1);
      value = end > 0 ? value.slice(1, end) : value.slice(1);
    } else value = value.replace(/\s*[#;].*$/, '');
    return value === '' ? undefined : value;
  }
  return undefined;
}
