// The entry of io/http/: the loopback HTTP server, and the capped body read the servers share.
export { loopbackHttp } from './loopback.js';
export { readBody } from './read-body.js';
