// The entry of io/http/: the loopback HTTP server, and the header and capped body reads the servers share.
export { loopbackHttp } from './loopback.js';
export { readBody } from './read-body.js';
export { contentLengthOf, singleHeader } from './headers.js';
