// Capability tokens: what a token is refused for (missing, malformed, unknown, expired, revoked at its run's end),
// that the store never holds the token itself, and that revoking one run leaves the others.
import t from 'tap';
import { createCapabilityStore, tokenFromBytes, TOKEN_PREFIX } from '../../src/broker/capabilities.js';
import type { Grant } from '../../src/broker/types.js';

/** A fake randomness: 32 bytes, each call different. */
function counterBytes(): () => Uint8Array {
  let n = 0;
  return () => new Uint8Array(32).fill(++n % 256);
}

const grant = (fields: Partial<Grant> = {}): Grant => ({
  repo: 'web',
  run: 'run-1',
  task: 'TASK-1',
  uid: 1001,
  expiresAt: 10_000,
  ...fields,
});

t.test('a token is its prefix and 32 random bytes', async (t) => {
  const token = tokenFromBytes(new Uint8Array(32).fill(255));
  t.equal(token, `${TOKEN_PREFIX}${'_'.repeat(42)}8`);
  t.throws(() => tokenFromBytes(new Uint8Array(16)), /32 random bytes/);
});

t.test('issue, check, expire, revoke', async (t) => {
  const store = createCapabilityStore(counterBytes());
  const first = store.issue(grant());
  const second = store.issue(grant({ run: 'run-2', task: 'TASK-2' }));
  t.not(first, second);
  t.same(store.check(first, 0), { ok: true, grant: grant() });
  t.same(store.check(undefined, 0), { ok: false, why: 'missing' });
  t.same(store.check('', 0), { ok: false, why: 'missing' });
  t.same(store.check('sk-ant-api03-forged', 0), { ok: false, why: 'unknown' }, 'not a token at all');
  t.same(store.check(tokenFromBytes(new Uint8Array(32).fill(200)), 0), { ok: false, why: 'unknown' });
  t.same(store.check(`${first.slice(0, -1)}A`, 0), { ok: false, why: 'unknown' }, 'one character off');
  t.same(store.check(first, 10_000), { ok: false, why: 'expired' }, 'at its expiry');
  t.equal(store.live(0), 2);
  t.equal(store.revokeRun('run-1', 5), 1);
  t.equal(store.revokeRun('run-1', 6), 0, 'revoking twice revokes nothing more');
  t.same(store.check(first, 6), { ok: false, why: 'revoked' }, 'used after its run ended');
  t.same(store.check(second, 6), { ok: true, grant: grant({ run: 'run-2', task: 'TASK-2' }) }, 'the other run goes on');
  t.equal(store.live(6), 1);
  store.sweep(10_000);
  t.same(store.check(first, 10_001), { ok: false, why: 'unknown' }, 'forgotten once past its expiry');
  t.equal(store.live(10_001), 0);
});

t.test('a grant is frozen as issued: changing the caller object changes nothing', async (t) => {
  const store = createCapabilityStore(counterBytes());
  const given = { ...grant() };
  const token = store.issue(given);
  given.uid = 0;
  const checked = store.check(token, 0);
  t.equal(checked.ok && checked.grant.uid, 1001);
  t.ok(checked.ok && Object.isFrozen(checked.grant));
});

t.test('a repeated random value is refused, never handed out twice', async (t) => {
  const store = createCapabilityStore(() => new Uint8Array(32).fill(7));
  store.issue(grant());
  t.throws(() => store.issue(grant({ run: 'run-2' })), /repeated/);
});

t.test("one token is revoked when its command ends; the run's others go on", async (t) => {
  const store = createCapabilityStore(counterBytes());
  const first = store.issue(grant());
  const second = store.issue(grant({ task: 'TASK-2' }));
  t.equal(store.revoke(first, 5), true);
  t.equal(store.revoke(first, 6), false, 'revoking twice revokes nothing more');
  t.equal(store.revoke(tokenFromBytes(new Uint8Array(32).fill(9)), 6), false, 'an unknown token: nothing');
  t.same(store.check(first, 6), { ok: false, why: 'revoked' });
  t.same(store.check(second, 6), { ok: true, grant: grant({ task: 'TASK-2' }) });
});
