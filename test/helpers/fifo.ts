// A named pipe for tests that plant one where a file should be (Node has no mkfifo).
import { execFileSync } from 'node:child_process';

export function mkfifoSync(file: string): void {
  execFileSync('mkfifo', [file]);
}
