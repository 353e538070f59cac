// What dispatch and the watcher refuse to start without: the egress lock,
// the agent's proxy port and (once the registry has one) the runner's.
import t from 'tap';
import { isolationGaps } from '../../src/cli/isolation-check.js';

const all = { egressLoaded: true, proxyAnswers: true, runnerProxyAnswers: true };

t.test('nothing missing: no gap (control)', async (t) => {
  t.same(isolationGaps({ proxyPort: 700, runnerProxyPort: 701 }, all), []);
});

t.test('each missing part is named', async (t) => {
  t.match(isolationGaps({ proxyPort: 700 }, { ...all, egressLoaded: false }), [/no egress lock is loaded/]);
  t.match(isolationGaps({ proxyPort: 700 }, { ...all, proxyAnswers: false }), [
    /nothing listens on the repo's proxy port 127\.0\.0\.1:700/,
  ]);
  t.match(isolationGaps({ proxyPort: 700, runnerProxyPort: 701 }, { ...all, runnerProxyAnswers: false }), [
    /nothing listens on the runner's proxy port 127\.0\.0\.1:701/,
  ]);
});

t.test('a repo with no runner port yet is not refused for it', async (t) => {
  t.same(isolationGaps({ proxyPort: 700 }, { ...all, runnerProxyAnswers: false }), []);
});
