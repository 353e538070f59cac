// A request body read with a cap: the broker's and the push webhook's
// servers take bodies from callers they do not trust, so neither may buffer
// past its limit, and a caller that goes away mid-body is told apart.
import type * as http from 'node:http';

/**
 * The body, at most `max` bytes; 'too-large' as soon as it passes them (the rest is never read), 'aborted' when the
 * caller went away.
 */
export function readBody(request: http.IncomingMessage, max: number): Promise<Buffer | 'too-large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        request.off('data', onData);
        request.pause();
        resolve('too-large');
      } else chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve(size > max ? 'too-large' : Buffer.concat(chunks, size)));
    request.once('error', () => resolve('aborted'));
    request.once('close', () => {
      if (!request.complete) resolve('aborted');
    });
  });
}
