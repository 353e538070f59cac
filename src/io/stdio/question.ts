// One question on the terminal: the prompt goes to stderr (stdout stays for
// results), the answer is the next line typed on stdin. Ctrl-C or Ctrl-D is
// no answer (undefined), never a yes.
import { createInterface } from 'node:readline';

export function askOnTerminal(question: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const terminal = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    let answer: string | undefined;
    terminal.on('SIGINT', () => {
      process.stderr.write('\n');
      terminal.close();
    });
    terminal.on('close', () => resolve(answer));
    terminal.question(question, (line) => {
      answer = line;
      terminal.close();
    });
  });
}
