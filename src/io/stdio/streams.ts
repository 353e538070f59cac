// stdout and stderr for the CLI's out and err. A reader that goes away
// (`agent-runner status | head -1`) makes the next write fail with EPIPE,
// which Node reports as an 'error' event on the stream: unhandled, that is a
// crash with a stack trace. Here it closes the writer instead: later writes
// are dropped and `onClosed` runs once, so the command can stop.
import type { Writable } from 'node:stream';

export function closableWriter(stream: Writable, onClosed: (code: string | undefined) => void): (text: string) => void {
  let closed = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (closed) return;
    closed = true;
    onClosed(error.code);
  });
  return (text) => {
    if (!closed) stream.write(text);
  };
}
