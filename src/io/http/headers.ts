// A request's headers as the servers read them: one value or none (a header
// given twice is not trusted to be either), and Content-Length only when it
// is a plain count.
import type * as http from 'node:http';

export function singleHeader(request: http.IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

export function contentLengthOf(request: http.IncomingMessage): number | undefined {
  const length = singleHeader(request, 'content-length');
  return length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
}
