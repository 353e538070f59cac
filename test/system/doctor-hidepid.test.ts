// doctor's /proc check against both real mount states. /proc is remounted
// with hidepid only inside a private mount namespace (unshare -m, private
// propagation) that ends with the command: the host's /proc is never touched.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipWithReason, systemTestMayRun } from '../helpers/system.js';
import { testUser } from '../helpers/netns.js';

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHECK = `import(${JSON.stringify(path.join(DIST, 'backends/host/doctor-host.js'))}).then(async (m) => { const io = await import(${JSON.stringify(path.join(DIST, 'src/io/real-ports.js'))}); process.stdout.write(JSON.stringify(await m.hidepidCheck(io.realPorts().fs))); })`;

/** Runs `script` (sh) in a private mount namespace; with hidepid, /proc is remounted there first. */
function inMountNamespace(hidepid: string | undefined, script: string, args: readonly string[] = []) {
  const mount = hidepid ? `mount -t proc -o hidepid=${hidepid} proc /proc && ` : '';
  const result = spawnSync(
    'unshare',
    ['--mount', '--propagation', 'private', 'sh', '-c', `${mount}${script}`, 'sh', ...args],
    { encoding: 'utf8', timeout: 30_000 },
  );
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

if (systemTestMayRun(t, ['unshare', 'mount', 'setpriv', 'useradd'])) {
  const user = testUser(t);
  const hostHidden = /^\S+ \S+ \S+ \S+ \/proc .* - proc \S+ \S*hidepid=(2|invisible|4|ptraceable)/m.test(
    spawnSync('cat', ['/proc/self/mountinfo'], { encoding: 'utf8' }).stdout,
  );
  // What a repo user sees of root's processes: does pid 1's cmdline read?
  const peek =
    'setpriv --reuid="$1" --regid="$1" --init-groups cat /proc/1/cmdline >/dev/null 2>&1 && echo visible || echo hidden';

  t.test('with hidepid=invisible: another user sees nothing and doctor passes', async (t) => {
    const seen = inMountNamespace('invisible', peek, [String(user.uid)]);
    t.equal(seen.stdout.trim(), 'hidden', seen.stderr);
    const result = inMountNamespace('invisible', `exec "$1" -e "$2"`, [process.execPath, CHECK]);
    t.equal(result.status, 0, result.stderr);
    const check = JSON.parse(result.stdout) as { ok: boolean; detail: string };
    t.ok(check.ok);
    t.equal(check.detail, '/proc is mounted with hidepid=invisible');
  });

  const withoutHidepid = "without hidepid: another user reads root's argv and doctor fails with the fix";
  if (hostHidden) skipWithReason(t, withoutHidepid, 'the host mounts /proc with hidepid');
  else
    t.test(withoutHidepid, async (t) => {
      const seen = inMountNamespace('off', peek, [String(user.uid)]);
      t.equal(seen.stdout.trim(), 'visible', seen.stderr);
      const result = inMountNamespace('off', `exec "$1" -e "$2"`, [process.execPath, CHECK]);
      t.equal(result.status, 0, result.stderr);
      const check = JSON.parse(result.stdout) as { ok: boolean; detail: string; fix: string };
      t.notOk(check.ok);
      t.match(check.detail, /hidepid=off|without hidepid/);
      t.match(check.fix, 'mount -o remount,hidepid=invisible /proc');
    });
}
