// doctor's key-file checks against real files as root: the real reader
// (src/io/broker/key-file.ts, no link followed) and the broker's rule, for a
// good file, one open to others, one owned by root and a symbolic link.
import t from 'tap';
import { chmodSync, chownSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { brokerReport, readBrokerFacts } from '../../backends/host/doctor-broker.js';
import { realKeySource } from '../../src/io/broker/key-file.js';
import { realPorts } from '../../src/io/real-ports.js';
import { systemTestMayRun } from '../helpers/system.js';
import { tempDir } from '../helpers/temp.js';
import { testUser } from '../helpers/netns.js';
import { aRepo } from '../helpers/host-fixtures.js';

if (systemTestMayRun(t, ['useradd'])) {
  t.test('real key files through the real reader, judged for the broker uid', async (t) => {
    const owner = testUser(t);
    const dir = tempDir(t, 'agent-runner-doctor-keys-');
    const good = path.join(dir, 'web-anthropic');
    writeFileSync(good, 'sk-ant-api03-abcdefghijklmnop\n', { mode: 0o600 });
    chownSync(good, owner.uid, owner.gid);
    const open = path.join(dir, 'web-openai');
    writeFileSync(open, 'sk-proj-abcdefghijklmnop\n', { mode: 0o600 });
    chownSync(open, owner.uid, owner.gid);
    chmodSync(open, 0o644);
    const repo = aRepo('web', {
      broker: {
        port: 702,
        providers: {
          anthropic: { origin: 'https://api.anthropic.com', keyFile: good, keyKind: 'api-key' },
          openai: { origin: 'https://api.openai.com', keyFile: open, keyKind: 'api-key' },
        },
        maxBodyBytes: 1024,
      },
    });
    const facts = await readBrokerFacts({ process: realPorts().process, keys: realKeySource }, repo);
    const report = brokerReport(repo, { ...facts, accountUid: owner.uid });
    t.same(
      report.checks.slice(2).map((check) => [check.ok, check.detail, check.fix]),
      [
        [true, `${good}: one api-key, mode 0600, owned by agent-runner-broker`, ''],
        [false, `the key file ${open} is readable or writable by group or others (mode 0644)`, `run chmod 600 ${open}`],
      ],
    );
    chownSync(good, 0, 0);
    const link = path.join(dir, 'linked');
    symlinkSync(good, link);
    const linked = aRepo('web', {
      broker: {
        ...repo.broker!,
        providers: { anthropic: { origin: 'https://api.anthropic.com', keyFile: link, keyKind: 'api-key' } },
      },
    });
    const again = brokerReport(repo, {
      ...(await readBrokerFacts({ process: realPorts().process, keys: realKeySource }, repo)),
      accountUid: owner.uid,
    });
    t.equal(again.checks[2]!.detail, `the key file ${good} is owned by uid 0, not the broker's uid ${owner.uid}`);
    const viaLink = brokerReport(linked, {
      ...(await readBrokerFacts({ process: realPorts().process, keys: realKeySource }, linked)),
      accountUid: owner.uid,
    });
    t.equal(viaLink.checks[2]!.detail, `the key file ${link} is a symbolic link`, 'a link is never followed');
  });
}
