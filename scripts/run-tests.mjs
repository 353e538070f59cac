#!/usr/bin/env node
// Runs the compiled test suite with tap and ends with the plain
// "N passed, N failed, N skipped" line CI reads. Zero tests is a failure.
//   node scripts/run-tests.mjs [tap files or globs...]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

function testFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? testFiles(full) : name.endsWith('.test.js') ? [full] : [];
  });
}

// tap skips dist/ when it searches by itself, so the files are named here.
const files = process.argv.slice(2).length ? process.argv.slice(2) : testFiles('dist/test');
const args = ['tap', '--reporter=tap', '--disable-coverage', '--allow-empty-coverage', ...files];
// Tests that skip write why here (test/helpers/system.ts skipWithReason); the summary lists it.
const skipDir = mkdtempSync(path.join(tmpdir(), 'agent-runner-skips-'));
const skipLog = path.join(skipDir, 'skips.jsonl');
const child = spawn('npx', args, {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, AGENT_RUNNER_TEST_SKIP_LOG: skipLog },
});

/** One line per skipped test: which and why. */
function skipReasons() {
  let text = '';
  try {
    text = readFileSync(skipLog, 'utf8');
  } catch {
    // nothing skipped through the helper
  }
  rmSync(skipDir, { recursive: true, force: true });
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        const { test, reason } = JSON.parse(line);
        return `skipped: ${test}: ${reason}`;
      } catch {
        return `skipped: ${line}`;
      }
    });
}
let buffered = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  buffered = (buffered + chunk.toString('utf8')).slice(-65536);
});
child.on('close', (code) => {
  // tap's reporters end with "# { total: N, pass: N, fail: N, skip: N }" on a line of its own; the last one is tap's
  // (a test's own output may quote such a line inside its TAP stream).
  const match = [...buffered.matchAll(/^#\s*\{\s*total:\s*(\d+)([^}]*)\}/gm)].at(-1);
  if (!match) {
    console.log(`\ntests: no summary from tap (exit ${code}); treating as failure`);
    console.log('0 passed, 1 failed');
    process.exitCode = 1;
    return;
  }
  const count = (name) => Number((match[2].match(new RegExp(`${name}:\\s*(\\d+)`)) ?? [])[1] ?? 0);
  const total = Number(match[1]);
  const passed = count('pass');
  const failed = count('fail') + (code !== 0 && count('fail') === 0 ? 1 : 0);
  const skipped = count('skip') + count('todo');
  if (total === 0) {
    console.log('\ntests: zero tests ran');
    console.log('0 passed, 1 failed');
    process.exitCode = 1;
    return;
  }
  const reasons = skipReasons();
  if (reasons.length) console.log(`\n${reasons.join('\n')}`);
  else if (skipped) console.log('\n(skipped tests gave no reason through test/helpers/system.ts skipWithReason)');
  console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exitCode = failed > 0 || code !== 0 ? 1 : 0;
});
