// The generated config against the real Squid parser: accepted as generated,
// refused when an allowlist is broken in a way Squid treats as fatal.
import t from 'tap';
import { writeFileSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { squidConfig } from '../../backends/host/squid-config.js';
import { parseSquidConfig } from '../../backends/host/apply-squid.js';
import { realPorts } from '../../src/io/real-ports.js';
import { aRepo, squidLayoutUnder } from '../helpers/host-fixtures.js';
import { tempDir } from '../helpers/temp.js';
import { missingTools, systemTestMayRun } from '../helpers/system.js';

function write(root: string, repos: Parameters<typeof squidConfig>[0]): string {
  const rendered = squidConfig(repos, squidLayoutUnder(root), { hostsFile: path.join(root, 'hosts') });
  mkdirSync(path.join(root, 'etc', 'allow'), { recursive: true });
  writeFileSync(path.join(root, 'hosts'), '203.0.113.2 allowed.test\n');
  for (const file of rendered.allowlists) writeFileSync(file.path, file.text);
  writeFileSync(rendered.configFile, rendered.config);
  return rendered.configFile;
}

t.test('squid -k parse', async (t) => {
  if (missingTools(['squid']).length) {
    systemTestMayRun(t, ['squid']);
    return;
  }
  const ports = realPorts();
  const good = write(tempDir(t), [
    aRepo('alpha', { proxyPort: 700, allow: ['github.com', '.npmjs.org'] }),
    aRepo('beta', { proxyPort: 701 }),
  ]);
  t.equal(await parseSquidConfig(ports, good), undefined, 'the generated config parses');
  const identities = write(tempDir(t), [
    aRepo('alpha', {
      proxyPort: 700,
      runnerProxyPort: 701,
      url: 'https://github.com/o/alpha.git',
      allow: ['.github.com', '.npmjs.org'],
    }),
    aRepo('beta', { proxyPort: 702, runnerProxyPort: 703, url: '/srv/beta.git' }),
    aRepo('gamma', { proxyPort: 704, runnerProxyPort: 705, url: 'git@gitlab.com:o/g.git', anonymousFetch: true }),
  ]);
  t.equal(
    await parseSquidConfig(ports, identities),
    undefined,
    "runner ports (the git host; an empty list for a local origin) and the agent's git-host deny parse",
  );
  const broken = write(tempDir(t), [aRepo('alpha', { proxyPort: 700, allow: ['registry.npmjs.org', '.npmjs.org'] })]);
  const error = await parseSquidConfig(ports, broken);
  t.match(error, /'registry\.npmjs\.org' is a subdomain of '\.npmjs\.org'/);
  t.match(error, /Bungled/);
});
